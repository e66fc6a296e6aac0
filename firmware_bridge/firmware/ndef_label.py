# A card's label as phones and tag encoders write it: the text of the first NDEF Text record
# in an NFC Forum Type 2 Tag (NTAG21x). MicroPython and CPython alike; no I/O: the tag's memory
# comes from a function that reads 16 bytes (4 pages) at a page, as the Type 2 READ does.
#
#   NFC Forum Type 2 Tag Operation: page 3 is the Capability Container (E1 = NDEF, version
#   (major 1: any other is not read), data area size / 8, access); the data area from page 4
#   is a sequence of TLV blocks: NULL (00, no length), Lock Control (01), Memory Control
#   (02), NDEF Message (03), Proprietary (FD), Terminator (FE, no length). A length is one
#   byte, or FF and two bytes big-endian.
#   An NTAG213 as shipped holds 01 03 A0 0C 34 (Lock Control) before its NDEF TLV.
#   NDEF: records with MB/ME/CF/SR/IL flags and a TNF; a label is the first well-known (TNF 1)
#   record of type "T". RTD Text: status byte (bit 7 UTF-16, bits 5-0 the language code's
#   length), the language code, the text: UTF-8, or UTF-16 (with a byte order mark, else
#   big-endian).
#
# Whatever the tag holds, nothing here raises: a message that does not parse has no label ("").
# Only the page reader's own errors pass through (the caller decides: read again, or give up).

NDEF_MAGIC = 0xE1
TLV_NULL = 0x00
TLV_NDEF = 0x03
TLV_TERMINATOR = 0xFE
MAX_MESSAGE = 512  # a label's message is tens of bytes; reading more would outlast the pass


class _Memory:
    """The data area (from page 4), read 16 bytes at a time as it is needed."""

    def __init__(self, read16, first):
        self.read16 = read16
        self.data = bytearray(first)

    def need(self, end):
        while len(self.data) < end:
            chunk = self.read16(4 + len(self.data) // 4)
            if len(chunk) != 16:
                raise ValueError("a READ gives 16 bytes")
            self.data.extend(chunk)

    def byte(self, i):
        self.need(i + 1)
        return self.data[i]

    def take(self, start, length):
        self.need(start + length)
        return bytes(self.data[start:start + length])


def read_label(read16):
    """The label of a Type 2 Tag whose pages ``read16(page)`` reads: its first NDEF Text
    record's text, or "" when it has none."""
    head = read16(3)
    if len(head) != 16:
        raise ValueError("a READ gives 16 bytes")
    if head[0] != NDEF_MAGIC:
        return ""  # no NDEF Capability Container: never formatted for NDEF
    if head[1] >> 4 != 1:
        # A mapping version whose major number is not 1 is not the one this reader knows:
        # "the Reader/Writer shall not access" it (Type 2 Tag Operation, the CC's version
        # handling); nfcpy reads such a tag as having no NDEF. The card goes by its UID.
        return ""
    size = min(head[2] * 8, MAX_MESSAGE + 64)
    memory = _Memory(read16, head[4:])
    i = 0
    while i < size:
        tag = memory.byte(i)
        i += 1
        if tag == TLV_NULL:
            continue
        if tag == TLV_TERMINATOR or i >= size:
            return ""
        length = memory.byte(i)
        i += 1
        if length == 0xFF:
            if i + 2 > size:
                return ""
            length = memory.byte(i) << 8 | memory.byte(i + 1)
            i += 2
        if tag == TLV_NDEF:
            if length == 0 or length > MAX_MESSAGE or i + length > size:
                return ""  # empty, not a label's size, or longer than the tag's data area
            return message_text(memory.take(i, length))
        i += length  # Lock Control, Memory Control, Proprietary, or a TLV of a later version
    return ""


def message_text(message):
    """The text of the first Text record of an NDEF message; "" if it has none or does not
    parse."""
    i = 0
    n = len(message)
    while i + 3 <= n:
        header = message[i]
        type_length = message[i + 1]
        i += 2
        if header & 0x10:  # SR: a one-byte payload length
            payload_length = message[i]
            i += 1
        else:
            if i + 4 > n:
                return ""
            payload_length = (message[i] << 24 | message[i + 1] << 16 | message[i + 2] << 8
                              | message[i + 3])
            i += 4
        id_length = 0
        if header & 0x08:  # IL
            if i >= n:
                return ""
            id_length = message[i]
            i += 1
        record_type = message[i:i + type_length]
        start = i + type_length + id_length
        end = start + payload_length
        if end > n:
            return ""  # a torn record: the message stops inside it
        chunked = header & 0x20
        if header & 0x07 == 1 and record_type == b"T" and not chunked:
            return text_payload(message[start:end])
        if header & 0x40 and not chunked:  # ME: the last record
            return ""
        i = end
    return ""


def text_payload(payload):
    """An RTD Text record's payload as text; "" if it does not decode."""
    if not payload:
        return ""
    status = payload[0]
    start = 1 + (status & 0x3F)
    if start > len(payload):
        return ""
    data = payload[start:]
    if status & 0x80:
        return utf16(data)
    if not well_formed_utf8(data):
        return ""
    return data.decode("utf-8")


def well_formed_utf8(data):
    """Unicode's well-formed UTF-8 (Table 3-7). MicroPython's decode takes overlong forms
    (C0 AF for "/"), surrogates and code points past U+10FFFF, which the host's UTF-8 then
    refuses: a label must be checked here."""
    i = 0
    n = len(data)
    while i < n:
        lead = data[i]
        if lead < 0x80:
            i += 1
            continue
        if 0xC2 <= lead <= 0xDF:
            size, low, high = 2, 0x80, 0xBF
        elif 0xE0 <= lead <= 0xEF:
            size = 3
            low, high = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F)}.get(lead, (0x80, 0xBF))
        elif 0xF0 <= lead <= 0xF4:
            size = 4
            low, high = {0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}.get(lead, (0x80, 0xBF))
        else:
            return False
        if i + size > n or not low <= data[i + 1] <= high:
            return False
        for k in range(i + 2, i + size):
            if not 0x80 <= data[k] <= 0xBF:
                return False
        i += size
    return True


def utf16(data):
    """UTF-16 text (MicroPython's decode knows UTF-8 only): a byte order mark says the order,
    else big-endian; "" when the text is not well formed."""
    big = True
    if len(data) >= 2 and data[0] == 0xFF and data[1] == 0xFE:
        big = False
        data = data[2:]
    elif len(data) >= 2 and data[0] == 0xFE and data[1] == 0xFF:
        data = data[2:]
    if len(data) % 2:
        return ""
    out = []
    high = 0
    for i in range(0, len(data), 2):
        unit = (data[i] << 8 | data[i + 1]) if big else (data[i + 1] << 8 | data[i])
        if high:
            if not 0xDC00 <= unit <= 0xDFFF:
                return ""
            out.append(chr(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)))
            high = 0
        elif 0xD800 <= unit <= 0xDBFF:
            high = unit
        elif 0xDC00 <= unit <= 0xDFFF:
            return ""
        else:
            out.append(chr(unit))
    if high:
        return ""
    return "".join(out)
