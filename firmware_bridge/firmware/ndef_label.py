# A card's label as phones and tag encoders write it: the text of the first NDEF Text record
# in an NFC Forum Type 2 Tag (NTAG21x). MicroPython and CPython alike; no I/O: the tag's memory
# comes from a function that reads 16 bytes (4 pages) at a page, as the Type 2 READ does.
#
#   NFC Forum Type 2 Tag Operation: page 3 is the Capability Container (E1 = NDEF, version
#   (major 1: any other is not read), data area size / 8, access); the data area from page 4
#   is a sequence of TLV blocks: NULL (00, no length), Lock Control (01), Memory Control
#   (02), NDEF Message (03), Proprietary (FD), Terminator (FE, no length). A length is one
#   byte, or FF and two bytes big-endian.
#   Lock and Memory Control TLVs take bytes out of the data area: their value is PageAddr
#   (high nibble) and ByteOffset (low nibble), a size, and BytesPerPage (the low nibble of the
#   third byte, a power of two); the area starts at PageAddr * 2**BytesPerPage + ByteOffset
#   (bytes from page 0) and is the size in bytes (Memory Control: reserved bytes) or in bits
#   (Lock Control: its lock bytes are the bits / 8, rounded up); a size of 0 is 256 (the
#   areas nfcpy's get_lock_byte_range and get_rsvd_byte_range give). A writer steps over those
#   bytes, and so does the reader, in every byte of the TLV blocks after the control TLV
#   (nfcpy at a TLV's start and in its value; Android's libnfc-nci "while searching for TLV",
#   its length too). A tag with more than CONTROL_AREAS of them is not read (none is written
#   so). An NTAG213 as shipped holds 01 03 A0 0C 34 (Lock Control: 2 lock bytes at 160, just
#   past its data area) before its NDEF TLV.
#   NDEF: records, each a header (MB, ME, CF, SR, IL flags and the TNF), TYPE LENGTH,
#   PAYLOAD LENGTH (one byte when SR, else four), ID LENGTH when IL, then the type, the id and
#   the payload. A record may come in chunks (CF on all but the last, the chunks after the
#   first with TNF 6, "unchanged"; ME on the last only): its payload is theirs end to end. A
#   TNF of 7 (reserved), or chunks broken off, is a message that does not parse. A label is
#   the first well-known (TNF 1) record of type "T". RTD Text: status byte (bit 7 UTF-16,
#   bits 5-0 the language code's length), the language code, the text: UTF-8, or UTF-16
#   (with a byte order mark, else big-endian).
#
# The reader walks the headers and reads only the Text record's payload (its language code
# skipped, not kept): whatever else the message holds (a vCard, a URI, records of any length,
# before or after the Text record) is stepped over without being read, so the message's size is
# bounded by the tag's data area and nothing else. Only the READ the walk is in is held. A text
# longer than TEXT_BYTES (read, or as UTF-8) is read as far as that, cut at a character: the
# host's frame carries 233 bytes at most, so such a label is cut, and said to be, as the whole
# would be.
#
# Whatever the tag holds, nothing here raises: a message that does not parse has no label ("").
# Only the page reader's own errors pass through (the caller decides: read again, or give up).

try:
    from micropython import const
except ImportError:  # CPython
    def const(value):
        return value


_NDEF_MAGIC = const(0xE1)
_TLV_NULL = const(0x00)
_TLV_LOCK = const(0x01)
_TLV_MEMORY = const(0x02)
_TLV_NDEF = const(0x03)
_TLV_TERMINATOR = const(0xFE)
_DATA_START = const(16)  # page 4
_CONTROL_AREAS = const(4)  # Lock and Memory Control areas kept; a tag with more is not read
TEXT_BYTES = 512  # of a label's text read at most: more than twice what a CARD frame carries
_ME = const(0x40)  # the message's last record
_CF = const(0x20)  # a chunk, more follow
_SR = const(0x10)  # a one-byte payload length
_IL = const(0x08)  # an ID LENGTH field
_TNF_WELL_KNOWN = const(1)
_TNF_UNCHANGED = const(6)
_TNF_RESERVED = const(7)


class _Outside(Exception):
    """The walk went past what the tag or the message holds: no label."""


class _Area:
    """The data area as the walk reads it: the byte at a cursor (``at``, bytes from page 0),
    the READ it is in read when the cursor leaves the one held, the control areas stepped
    over."""

    def __init__(self, read16, end, head):
        self.read16 = read16
        self.end = end  # the data area's end, as the Capability Container says
        self.base = 12  # the READ held starts at this byte: page 3's holds pages 3 to 6
        self.data = head
        self.at = _DATA_START
        self.holes = []  # (start, end), in the order of their starts
        self.left = 0  # of a payload read with payload(): its bytes at the cursor

    def byte(self):
        """The byte at the cursor; the cursor on to the next byte of the data area."""
        at = self.at
        if at >= self.end:
            raise _Outside()
        offset = at - self.base
        if not 0 <= offset < 16:
            data = self.read16(at >> 2)
            if len(data) != 16:
                raise ValueError("a READ gives 16 bytes")
            self.base = at & ~3
            self.data = data
            offset = at - self.base
        self.skip(1)
        return self.data[offset]

    def after(self, count):
        """Where the cursor would be ``count`` bytes of the data area on, the control areas
        not counted (on the next byte that is not in one)."""
        at = self.at
        for start, end in self.holes:
            if end <= at:
                continue  # behind, or inside one stepped over already
            if start > at + count:
                break
            if start > at:
                count -= start - at
            at = end
        return at + count

    def skip(self, count):
        self.at = self.after(count)

    def payload(self):
        """The next byte of a record's payload (``left`` bytes of it at the cursor), on
        through the chunks after it (their headers, type and id stepped over)."""
        while not self.left:
            _, type_length, self.left, id_length, _ = _header(self)
            self.skip(type_length + id_length)
        self.left -= 1
        return self.byte()

    def hole(self, kind, position, size, control):
        """A Lock or Memory Control TLV's area (its value's three bytes), stepped over from
        now on."""
        start = (position >> 4) * (1 << (control & 0x0F)) + (position & 0x0F)
        size = size or 256
        if kind == _TLV_LOCK:
            size = (size + 7) // 8  # the size is in lock bits
        holes = self.holes
        if len(holes) >= _CONTROL_AREAS:
            raise _Outside()
        i = 0
        while i < len(holes) and holes[i][0] < start:
            i += 1
        holes.insert(i, (start, start + size))
        self.skip(0)  # the cursor off an area that starts at or before it


def read_label(read16):
    """The label of a Type 2 Tag whose pages ``read16(page)`` reads: its first NDEF Text
    record's text, or "" when it has none."""
    head = read16(3)
    if len(head) != 16:
        raise ValueError("a READ gives 16 bytes")
    if head[0] != _NDEF_MAGIC:
        return ""  # no NDEF Capability Container: never formatted for NDEF
    if head[1] >> 4 != 1:
        # A mapping version whose major number is not 1 is not the one this reader knows:
        # "the Reader/Writer shall not access" it (Type 2 Tag Operation, the CC's version
        # handling); nfcpy reads such a tag as having no NDEF. The card goes by its UID.
        return ""
    area = _Area(read16, _DATA_START + head[2] * 8, head)
    try:
        while True:
            tag = area.byte()
            if tag == _TLV_NULL:
                continue
            if tag == _TLV_TERMINATOR:
                return ""
            length = area.byte()
            if length == 0xFF:
                length = area.byte() << 8
                length |= area.byte()
            if tag == _TLV_NDEF:
                return _message_text(area, length)
            if _TLV_LOCK <= tag <= _TLV_MEMORY and length == 3:  # Lock or Memory Control
                position = area.byte()
                size = area.byte()
                area.hole(tag, position, size, area.byte())
            else:
                area.skip(length)  # Proprietary, a control TLV of another length, a later one
    except _Outside:
        return ""


def _header(area):
    """An NDEF record's header at the cursor: (flags and TNF, TYPE LENGTH, PAYLOAD LENGTH,
    ID LENGTH, the header's own length); the cursor on its type."""
    header = area.byte()
    type_length = area.byte()
    if header & _SR:
        payload_length = area.byte()
        used = 3
    else:
        payload_length = 0
        for _ in range(4):
            payload_length = payload_length << 8 | area.byte()
        used = 6
    id_length = 0
    if header & _IL:
        id_length = area.byte()
        used += 1
    return header, type_length, payload_length, id_length, used


def _message_text(area, left):
    """The text of the first Text record of the NDEF message of ``left`` bytes at the cursor;
    "" if it has none or does not parse. Only the headers and that record's payload are
    read."""
    if left == 0 or area.after(left - 1) >= area.end:
        return ""  # empty, or longer than the data area holds
    chunks = 0  # in a chunked record: 1 a Text record's, 2 another's
    text_at = first = total = 0
    while left:
        header, type_length, payload_length, id_length, used = _header(area)
        left -= used + type_length + id_length + payload_length
        if left < 0:
            return ""  # a torn record: the message stops inside it
        tnf = header & 0x07
        more = header & _CF
        if tnf == _TNF_RESERVED or (more and header & _ME):
            return ""
        if chunks:
            if tnf != _TNF_UNCHANGED:
                return ""  # a chunked record broken off
            area.skip(type_length + id_length + payload_length)
            if chunks == 1:
                total += payload_length
                if not more:  # its last chunk: the text, from its first chunk
                    area.at = text_at
                    return _text(area, first, total)
            if not more:
                chunks = 0
        else:
            text = False
            if tnf == _TNF_WELL_KNOWN and type_length == 1:
                text = area.byte() == 0x54  # "T"
            else:
                area.skip(type_length)
            area.skip(id_length)
            if text and not more:
                return _text(area, payload_length, payload_length)
            if text:
                chunks = 1
                text_at = area.at
                first = total = payload_length
            elif more:
                chunks = 2
            area.skip(payload_length)
        if header & _ME and not chunks:
            return ""  # the last record
    return ""


def _text(area, first, total):
    """An RTD Text payload of ``total`` bytes at the cursor (its first chunk ``first`` bytes)
    as text; "" if it does not decode."""
    if not total:
        return ""
    area.left = first
    status = area.payload()
    size = total - 1 - (status & 0x3F)
    if size < 0:
        return ""
    for _ in range(status & 0x3F):
        area.payload()  # the language code: not needed
    cut = size > TEXT_BYTES
    if cut:
        size = TEXT_BYTES
    data = bytearray(size)
    for i in range(size):
        data[i] = area.payload()
    if status & 0x80:
        return utf16(data, cut)
    size = well_formed_utf8(data, cut)
    if size < 0:
        return ""
    return str(memoryview(data)[:size], "utf-8")  # the view: not a copy


def well_formed_utf8(data, cut=False):
    """How much of ``data`` is Unicode's well-formed UTF-8 (Table 3-7): all of it, or -1 when
    it is not; ``cut``: the text goes on past ``data``, whose end may cut a character (left
    out). MicroPython's decode takes overlong forms (C0 AF for "/"), surrogates and code
    points past U+10FFFF, which the host's UTF-8 then refuses: a label must be checked here.
    Nothing is allocated."""
    i = 0
    n = len(data)
    while i < n:
        lead = data[i]
        if lead < 0x80:
            i += 1
            continue
        low = 0x80
        high = 0xBF
        if 0xC2 <= lead <= 0xDF:
            size = 2
        elif 0xE0 <= lead <= 0xEF:
            size = 3
            if lead == 0xE0:
                low = 0xA0  # not overlong
            elif lead == 0xED:
                high = 0x9F  # not a surrogate
        elif 0xF0 <= lead <= 0xF4:
            size = 4
            if lead == 0xF0:
                low = 0x90  # not overlong
            elif lead == 0xF4:
                high = 0x8F  # not past U+10FFFF
        else:
            return -1
        if i + size > n:
            return i if cut else -1
        if not low <= data[i + 1] <= high:
            return -1
        for k in range(i + 2, i + size):
            if not 0x80 <= data[k] <= 0xBF:
                return -1
        i += size
    return n


def utf16(data, cut=False):
    """UTF-16 text (MicroPython's decode knows UTF-8 only): a byte order mark says the order,
    else big-endian; "" when the text is not well formed. ``cut``: the text goes on past
    ``data``, whose end may cut a unit or a surrogate pair (left out). Written as UTF-8 into
    one buffer of TEXT_BYTES at most (a text longer than that is cut there, at a character),
    then decoded once."""
    big = True
    start = 0
    end = len(data)
    if end >= 2 and data[0] == 0xFF and data[1] == 0xFE:
        big = False
        start = 2
    elif end >= 2 and data[0] == 0xFE and data[1] == 0xFF:
        start = 2
    if cut:
        end -= (end - start) % 2
        if end - start >= 2 and 0xD8 <= data[end - 2 if big else end - 1] <= 0xDB:
            end -= 2  # a high surrogate, its low one cut off
    if (end - start) % 2:
        return ""
    out = bytearray(min((end - start) * 3 // 2, TEXT_BYTES))  # 3 bytes at most for 2
    n = 0
    high = 0
    for i in range(start, end, 2):
        unit = (data[i] << 8 | data[i + 1]) if big else (data[i + 1] << 8 | data[i])
        if high:
            if not 0xDC00 <= unit <= 0xDFFF:
                return ""
            unit = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00)
            high = 0
        elif 0xD800 <= unit <= 0xDBFF:
            high = unit
            continue
        elif 0xDC00 <= unit <= 0xDFFF:
            return ""
        size = 1 if unit < 0x80 else 2 if unit < 0x800 else 3 if unit < 0x10000 else 4
        if n + size > len(out):
            break  # longer than a label is read
        if size == 1:
            out[n] = unit
        else:
            shift = 6 * (size - 1)
            out[n] = (0xF00 >> size) & 0xFF | unit >> shift  # C0, E0 or F0, and the top bits
            for k in range(n + 1, n + size):
                shift -= 6
                out[k] = 0x80 | (unit >> shift) & 0x3F
        n += size
    if high:
        return ""
    return str(memoryview(out)[:n], "utf-8")
