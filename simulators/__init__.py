"""Simulated hardware and test doubles, behind the real libraries: the shoe's firmware on a pty,
a PN532 for nfcpy, an I2C bus for luma, the scripted dealer, the shoe-side frames, a member of
staff on the dashboard's API, and a Mosquitto launcher. Installed: ``tablectl sim`` and
``tablectl bench`` run with them. The lab's own launchers (a venue's network, NATS clusters,
PostgreSQL) are in the harness, which is not (harness/__init__.py)."""
