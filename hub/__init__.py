"""The venue side: the recorder, the venue clock, the floor dashboard and the group's centre."""
