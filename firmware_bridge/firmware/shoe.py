# The shoe's application logic: reader, sensors and deck switch in; protocol messages out.
#
# MicroPython and CPython alike. The hardware is passed in, so the board (main.py) and the
# simulated shoe (simulators/shoe.py) run this same code:
#   reader.read(now_ms) -> (uid bytes, label) or None: label "" when the tag has none, None
#                          when it could not be read this time;  reader.ok() -> bool
#   exit_sensor.face_up() -> bool   (the card at the mouth shows its face)
#   stack_sensor.boxed() -> bool    (latched: the card now at the mouth lay face up in the stack)
#   deck_switch.present() -> bool
#   each sensor: ok() -> bool

SAME_CARD_MS = 300  # one card passing the antenna is read several times: count it once
# A card whose label could not be read is held while the reader tries again; if it leaves the
# field first (another card, or this long), it goes to the host as unreadable: the floor is
# called, as for a tag that gave no UID. (Sent as "no label", it would pass for another tag.)
LABEL_WAIT_MS = 200
FIRMWARE_CLEAR_MS = 1000  # healthy turns this long after a crash before "firmware ok" is sent

FAULT_READER = 1
FAULT_EXIT = 2
FAULT_STACK = 3
FAULT_FIRMWARE = 4


class Shoe:
    def __init__(self, protocol, reader, exit_sensor, stack_sensor, deck_switch, now_ms):
        self.protocol = protocol
        self.reader = reader
        self.exit_sensor = exit_sensor
        self.stack_sensor = stack_sensor
        self.deck_switch = deck_switch
        self.deck_present = deck_switch.present()
        self.last_uid = None
        self.last_read_ms = now_ms
        self.held = None  # [uid, ms, face_up, boxed] of a card whose label is not read yet
        self.faults = {FAULT_READER: False, FAULT_EXIT: False, FAULT_STACK: False}
        self.crashed_ms = None  # last failing turn, while the firmware fault is raised

    def turn(self, now_ms, incoming=b""):
        """One turn of the main loop, guarded: what the host sent in, the world read, bytes
        out. An exception in any part is reported to the host as a FAULT (once, until the
        loop has run clean for a second) and the loop carries on; the result says whether
        this turn was healthy, so the board feeds its watchdog only then.
        Returns (bytes to write, healthy)."""
        healthy = True
        if incoming:
            try:
                self.protocol.receive(incoming, now_ms)
            except Exception as exc:  # whatever it is, the loop must go on
                self.protocol.rx = bytearray()
                healthy = self._crashed(now_ms, "receive", exc)
        try:
            self.step(now_ms)
        except Exception as exc:
            healthy = self._crashed(now_ms, "step", exc)
        if healthy and self.crashed_ms is not None and \
                ((now_ms - self.crashed_ms) & 0xFFFFFFFF) >= FIRMWARE_CLEAR_MS:
            self.crashed_ms = None
            self.protocol.fault(now_ms, FAULT_FIRMWARE, False, "firmware loop running clean")
        try:
            return self.protocol.poll(now_ms), healthy
        except Exception as exc:
            return b"", self._crashed(now_ms, "poll", exc)

    def _crashed(self, now_ms, where, exc):
        if self.crashed_ms is None:
            try:
                self.protocol.fault(now_ms, FAULT_FIRMWARE, True,
                                    where + ": " + type(exc).__name__ + ": " + str(exc))
            except Exception:  # nothing more can be said; the watchdog decides
                pass
        self.crashed_ms = now_ms
        return False

    def step(self, now_ms):
        proto = self.protocol
        present = self.deck_switch.present()
        if present != self.deck_present:
            self.deck_present = present
            if present:
                proto.deck_in(now_ms)
            else:
                proto.deck_out(now_ms)
        self._faults(now_ms)
        tag = self.reader.read(now_ms)
        if self.held is not None:
            tag = self._held(now_ms, tag)
        if tag is not None:
            uid, text = tag
            since = (now_ms - self.last_read_ms) & 0xFFFFFFFF
            repeat = uid == self.last_uid and since < SAME_CARD_MS
            self.last_uid = uid
            self.last_read_ms = now_ms
            if not repeat:
                face_up = self.exit_sensor.face_up()
                boxed = self.stack_sensor.boxed()
                if text is None:
                    self.held = [uid, now_ms, face_up, boxed]
                else:
                    proto.card(now_ms, uid, text, face_up, boxed)
        proto.sensors = ((1 if self.exit_sensor.ok() else 0) | (2 if self.stack_sensor.ok() else 0)
                         | (4 if self.reader.ok() else 0) | (8 if present else 0))

    def _held(self, now_ms, tag):
        """The card waiting for its label, given this turn's read; the read still to handle."""
        uid, read_ms, face_up, boxed = self.held
        if tag is not None and tag[0] == uid:
            self.last_read_ms = now_ms
            if tag[1] is None and ((now_ms - read_ms) & 0xFFFFFFFF) < LABEL_WAIT_MS:
                return None  # still no label: try again on the next turn
            self.held = None
            self.protocol.card(now_ms, uid if tag[1] is not None else b"", tag[1] or "",
                               face_up, boxed, read_ms)
            return None
        if tag is not None or ((now_ms - read_ms) & 0xFFFFFFFF) >= LABEL_WAIT_MS:
            self.held = None  # it left the field unread; the next card comes after it
            self.protocol.card(now_ms, b"", "", face_up, boxed, read_ms)
            if tag is None:
                self.last_read_ms = now_ms  # seen again within 300 ms, it is this card
        return tag

    def _faults(self, now_ms):
        for code, part, name in ((FAULT_READER, self.reader, "reader"),
                                 (FAULT_EXIT, self.exit_sensor, "exit sensor"),
                                 (FAULT_STACK, self.stack_sensor, "stack sensor")):
            failing = not part.ok()
            if failing != self.faults[code]:
                self.faults[code] = failing
                self.protocol.fault(now_ms, code, failing,
                                    name + (" not answering" if failing else " back"))
