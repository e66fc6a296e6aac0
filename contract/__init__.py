"""What the tables and the hub share, and only that: the strict JSON of the wire, the AsyncAPI
schemas every consumer validates against, the topics, the envelope, the public view, the floor
commands, the MQTT client and the supervision of worker threads."""
