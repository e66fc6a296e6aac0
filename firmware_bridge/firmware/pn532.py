# A small PN532 driver for the shoe (MicroPython, I2C), reading NTAG21x cards: the UID, and the
# first NDEF Text record ("R1:As"). The bus is passed in (machine.I2C on the board; any object
# with writeto/readfrom in tests), so CPython can test it against a simulated PN532.

ADDRESS = 0x24
ACK = b"\x00\x00\xff\x00\xff\x00"
CMD_GET_FIRMWARE = 0x02
CMD_SAM_CONFIGURATION = 0x14
CMD_IN_DATA_EXCHANGE = 0x40
CMD_IN_LIST_PASSIVE_TARGET = 0x4A
NTAG_READ = 0x30


class PN532Error(Exception):
    pass


class PN532:
    def __init__(self, i2c, sleep_ms, ticks_ms, address=ADDRESS):
        self.i2c = i2c
        self.sleep_ms = sleep_ms
        self.ticks_ms = ticks_ms
        self.address = address

    def _write(self, data):
        length = len(data)
        checksum = (-sum(data)) & 0xFF
        frame = bytes((0x00, 0x00, 0xFF, length, (-length) & 0xFF)) + data + bytes((checksum, 0x00))
        self.i2c.writeto(self.address, frame)

    def _wait_ready(self, timeout_ms):
        start = self.ticks_ms()
        while True:
            if self.i2c.readfrom(self.address, 1)[0] == 0x01:
                return True
            if (self.ticks_ms() - start) & 0xFFFFFFFF >= timeout_ms:
                return False
            self.sleep_ms(1)

    def _read(self, count):
        data = self.i2c.readfrom(self.address, count + 1)
        if data[0] != 0x01:
            raise PN532Error("not ready")
        return data[1:]

    def command(self, cmd, params=b"", response_length=32, timeout_ms=100):
        self._write(bytes((0xD4, cmd)) + params)
        if not self._wait_ready(timeout_ms):
            raise PN532Error("no ACK")
        if self._read(6) != ACK:
            raise PN532Error("bad ACK")
        if not self._wait_ready(timeout_ms):
            return None  # no answer in time (no card in the field)
        raw = self._read(response_length + 9)
        start = raw.find(b"\x00\xff")
        if start < 0:
            raise PN532Error("no frame start")
        length = raw[start + 2]
        if (length + raw[start + 3]) & 0xFF:
            raise PN532Error("bad length checksum")
        body = raw[start + 4:start + 4 + length]
        if len(body) < 2 or body[0] != 0xD5 or body[1] != cmd + 1:
            raise PN532Error("unexpected response")
        if (sum(body) + raw[start + 4 + length]) & 0xFF:
            raise PN532Error("bad data checksum")
        return body[2:]

    def firmware_version(self):
        return self.command(CMD_GET_FIRMWARE, response_length=4)

    def configure(self):
        self.command(CMD_SAM_CONFIGURATION, b"\x01\x14\x01")

    def read_uid(self, timeout_ms=20):
        response = self.command(CMD_IN_LIST_PASSIVE_TARGET, b"\x01\x00", 20, timeout_ms)
        if not response or response[0] < 1:
            return None
        size = response[5]
        return bytes(response[6:6 + size])

    def read_page4(self, page):
        response = self.command(CMD_IN_DATA_EXCHANGE, bytes((1, NTAG_READ, page)), 17)
        if not response or response[0] != 0:
            raise PN532Error("read failed")
        return bytes(response[1:17])

    def read_ndef_text(self):
        """The first NDEF Text record of an NTAG21x, or "" when there is none."""
        data = bytearray(self.read_page4(4))
        i = 0
        while i < len(data):
            tlv = data[i]
            if tlv == 0x00:
                i += 1
                continue
            if tlv != 0x03:
                return ""
            if i + 1 >= len(data):
                data += self.read_page4(4 + len(data) // 4)
            length = data[i + 1]
            start = i + 2
            if length == 0xFF:
                return ""  # messages this long are not card labels
            page = 4 + len(data) // 4
            while len(data) < start + length:
                data += self.read_page4(page)
                page += 4
            return parse_text_record(bytes(data[start:start + length]))
        return ""


def parse_text_record(message):
    if len(message) < 3:
        return ""
    header = message[0]
    tnf = header & 0x07
    short = header & 0x10
    has_id = header & 0x08
    type_length = message[1]
    i = 2
    if short:
        payload_length = message[i]
        i += 1
    else:
        payload_length = int.from_bytes(message[i:i + 4], "big")
        i += 4
    id_length = 0
    if has_id:
        id_length = message[i]
        i += 1
    record_type = message[i:i + type_length]
    i += type_length + id_length
    payload = message[i:i + payload_length]
    if tnf != 1 or record_type != b"T" or not payload:
        return ""
    language_length = payload[0] & 0x3F
    try:
        return payload[1 + language_length:].decode("utf-8")
    except UnicodeError:
        return ""


class PN532Reader:
    """The shoe's reader interface over a PN532."""

    def __init__(self, pn532):
        self.pn532 = pn532
        self.healthy = False
        self.next_check_ms = 0

    def read(self, now_ms):
        try:
            uid = self.pn532.read_uid()
            self.healthy = True
            if uid is None:
                return None
            try:
                text = self.pn532.read_ndef_text()
            except PN532Error:
                text = ""
            return uid, text
        except (PN532Error, OSError):
            self.healthy = False
            return None

    def ok(self):
        return self.healthy
