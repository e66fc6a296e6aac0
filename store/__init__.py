"""What the venue hub and the group both keep on disk: a database on SQLite or PostgreSQL,
migrated by version (``database``), and the uplink's state file, which the uplink writes and
the hub's retention reads (``uplink_state``)."""
