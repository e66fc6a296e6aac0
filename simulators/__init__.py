"""Simulated hardware and test doubles, behind the real libraries: the shoe's firmware on a pty,
a PN532 for nfcpy, an I2C bus for luma, the scripted dealer, and a Mosquitto launcher."""
