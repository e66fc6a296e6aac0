# Replays of the shoe firmware's sessions, for CPython and MicroPython alike: the same inputs
# (the clock, the host's bytes, the tags the reader hands over, boots and link changes) into
# the firmware's Shoe and ShoeProtocol, the bytes they write out. tests/test_shoe_link_faults.py
# records its property test's sessions as such steps; tests/test_firmware_micropython.py
# replays them on both interpreters and compares byte for byte. Also the label cases: a Type 2
# tag's memory in, its label (ndef_label.read_label) out.
#
# A step is a list: ["boot", boot_id, now_ms], ["tag", uid_hex, text], ["crash", count],
# ["link_up", now_ms], ["turn", now_ms, incoming_hex]; each turn gives [out_hex, healthy].

import json

try:
    from ndef_label import read_label
    from protocol import ShoeProtocol
    from shoe import Shoe
except ImportError:  # CPython: the firmware is a package
    from firmware_bridge.firmware.ndef_label import read_label
    from firmware_bridge.firmware.protocol import ShoeProtocol
    from firmware_bridge.firmware.shoe import Shoe


class Reader:
    def __init__(self):
        self.tags = []
        self.crashes = 0

    def read(self, now_ms):
        if self.crashes and self.tags:
            self.crashes -= 1
            raise ValueError("driver bug \u00e9")  # non-ASCII on purpose: FAULT text is ASCII
        if self.tags:
            return self.tags.pop(0)
        return None

    def ok(self):
        return True


class Sensor:
    def face_up(self):
        return False

    def boxed(self):
        return False

    def present(self):
        return False

    def ok(self):
        return True


def replay(steps):
    reader = Reader()
    protocol = None
    shoe = None
    outputs = []
    for step in steps:
        op = step[0]
        if op == "boot":
            protocol = ShoeProtocol(step[1], "fw", "shoe", 15, step[2])
            shoe = Shoe(protocol, reader, Sensor(), Sensor(), Sensor(), step[2])
        elif op == "tag":
            reader.tags.append((bytes.fromhex(step[1]), step[2]))
        elif op == "crash":
            reader.crashes = step[1]
        elif op == "link_up":
            protocol.link_up(step[1])
        else:
            out, healthy = shoe.turn(step[1], bytes.fromhex(step[2]))
            outputs.append([out.hex(), healthy])
    return outputs


def replay_file(path):
    with open(path) as f:
        sessions = json.load(f)
    return [replay(steps) for steps in sessions]


class Nak(Exception):
    pass


def label_of(memory):
    """The label of a tag whose memory (bytes, from page 0) the READs give; "NAK" when the
    walk reads past its last page."""
    pages = len(memory) // 4

    def read16(page):
        if page >= pages:
            raise Nak()
        return (memory + memory[:16])[page * 4:page * 4 + 16]

    try:
        return read_label(read16)
    except Nak:
        return "NAK"


def labels_file(path):
    with open(path) as f:
        memories = json.load(f)
    return [label_of(bytes.fromhex(memory)) for memory in memories]
