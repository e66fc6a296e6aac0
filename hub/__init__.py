"""The venue side: recorder, venue clock and the floor dashboard (later issues)."""
