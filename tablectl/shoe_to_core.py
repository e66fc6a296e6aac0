"""From shoe link events to table-core inputs. Pure.

Times: the core judges the dealing rhythm on the shoe's own millisecond clock, so a card that
was retransmitted late (after an unplug) keeps the time it was drawn. ``ShoeClock`` maps shoe
milliseconds onto the host's monotonic seconds, one offset per shoe boot, taken from the
smallest delay seen (the least-delayed message is the truest). A smaller delay seen later moves
the offset gradually (``SLEW``, as NTP slews a clock): had the first messages come late (a busy
host at the link's start), a step at the first quick one would shorten the gap between two
cards by the whole error, and a pause would read as the dealing rhythm.
"""

from __future__ import annotations

from controller.cards import label_of, normal_uid
from controller.events import Face, ShoeState
from controller.inputs import (
    CardRead,
    DealerSignIn,
    DeckIn,
    DeckOut,
    Input,
    ShoeStatus,
    dealer_id_problem,
)
from firmware_bridge import messages as m
from firmware_bridge.host import (
    LinkDown,
    LinkUp,
    ReadsLost,
    ShoeLinkEvent,
    ShoeRestarted,
)

# Seconds of correction a second: a gap between two cards stretches or shrinks by at most 2 %
# (10 ms in half a second, against a dealing gap of seconds); an error of 300 ms is gone in 15 s.
SLEW = 0.02


class ShoeClock:
    def __init__(self) -> None:
        self.offset: float | None = None
        self.last_ms: int | None = None
        self.wraps = 0
        self.observed_at = 0.0  # host time of the last observation
        self.pinned: float | None = None

    def pin(self, offset: float) -> None:
        """Take ``offset`` as the mapping, always, instead of estimating it: for a shoe whose
        clock is known to be this host's (the simulated shoe on a pty, whose milliseconds are
        the host's monotonic clock). The estimate's error, milliseconds on a real link, grows
        with a crowded host's scheduling delays, and a test that deals at twenty times a
        dealer's pace magnifies it twenty times."""
        self.pinned = self.offset = offset

    def reset(self) -> None:
        self.offset = self.pinned
        self.last_ms = None
        self.wraps = 0

    def observe(self, ms: int, host_now: float) -> None:
        candidate = host_now - self._unwrap(ms) / 1000.0
        if self.offset is None:
            self.offset = candidate
        elif candidate < self.offset and self.pinned is None:
            allowed = SLEW * max(0.0, host_now - self.observed_at)
            self.offset = max(candidate, self.offset - allowed)
        self.observed_at = host_now

    def _unwrap(self, ms: int) -> int:
        if self.last_ms is not None and ms < self.last_ms and self.last_ms - ms > 2**31:
            self.wraps += 1
        self.last_ms = ms
        return ms + self.wraps * 2**32

    def to_host(self, ms: int, host_now: float) -> float:
        self.observe(ms, host_now)
        assert self.offset is not None
        return self.offset + (ms + self.wraps * 2**32) / 1000.0


class ShoeTranslator:
    """Link events in, core inputs out (and the events worth logging, for the caller)."""

    def __init__(self) -> None:
        self.clock = ShoeClock()

    def translate(self, event: ShoeLinkEvent, host_now: float) -> list[Input]:
        if isinstance(event, m.CardDrawn):
            t = self.clock.to_host(event.ms, host_now)
            face = Face.UP if event.face_up else Face.DOWN
            if event.unreadable:
                return [CardRead(None, None, None, face, event.boxed, t)]
            return [tag_read(event.uid_hex, event.text, t, face, event.boxed,
                             cut=event.text_cut)]
        if isinstance(event, ReadsLost):
            cards = "" if event.cards is None else f", {event.cards} of them card reads"
            return [ShoeStatus(ShoeState.READS_LOST,
                               f"the shoe's queue overflowed: messages {event.first_seq}-"
                               f"{event.last_seq} lost{cards}", host_now, event.count,
                               event.cards)]
        if isinstance(event, m.DeckInserted):
            return [DeckIn(None, self.clock.to_host(event.ms, host_now))]
        if isinstance(event, m.DeckRemoved):
            return [DeckOut(self.clock.to_host(event.ms, host_now))]
        if isinstance(event, m.Fault):
            t = self.clock.to_host(event.ms, host_now)
            if event.active:
                return [ShoeStatus(ShoeState.FAULT, f"{event.source}: {event.text}", t,
                                   part=event.source)]
            return [ShoeStatus(ShoeState.OK, f"{event.source}: {event.text}", t,
                               part=event.source)]
        if isinstance(event, m.Heartbeat):
            self.clock.observe(event.ms, host_now)
            return []
        if isinstance(event, ShoeRestarted):
            self.clock.reset()
            return [ShoeStatus(ShoeState.FAULT, "shoe restarted: reads it had not sent are lost",
                               host_now, part="restart")]
        if isinstance(event, LinkDown):
            return [ShoeStatus(ShoeState.LOST, event.reason, host_now)]
        if isinstance(event, LinkUp):
            return [ShoeStatus(ShoeState.OK, None, host_now)]
        return []  # noise and retransmissions: the host link counts them (HostLink.stats)


BADGE_PREFIX = "dealer:"


def tag_read(uid: str, text: str | None, t: float, face: Face = Face.DOWN,
             boxed: bool = False, cut: bool = False) -> Input:
    """A tag read by the shoe, or by an NFC reader (SPEC 1.1's second backend, which has no
    orientation sensors: face down, never boxed). A dealer's badge, a tag whose NDEF text is
    ``dealer:<id>``, signs the dealer in (SPEC 1.3) whichever reader it is tapped on; anything
    else is a card: by its label when the tag has one, else by UID alone, for the table's
    enrolled UID table to name (or to find unknown)."""
    text = (text or "").strip()
    if text.startswith(BADGE_PREFIX):
        dealer = text[len(BADGE_PREFIX):].strip()
        if not cut and dealer_id_problem(dealer) is None:
            return DealerSignIn(dealer or None, t)
        # Cut to fit a frame, or with control characters: not a badge anyone can be signed in
        # by. A tag by its UID: the floor sees it, and who it was meant to be is not guessed.
        return CardRead(None, None, normal_uid(uid), face, boxed, t)
    tagged = label_of(text)
    if tagged is None:
        return CardRead(None, None, normal_uid(uid), face, boxed, t)
    return CardRead(tagged.card, tagged.deck, normal_uid(uid), face, boxed, t)
