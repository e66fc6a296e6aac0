"""The group of venues: a venue's uplink to the group's cluster, the group's central recorder,
and the NATS link both speak; what the centre asks again, and each venue's fair share of it."""
