"""The venue side: the recorder, the venue clock and the floor dashboard."""
