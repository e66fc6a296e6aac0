"""Cards, deck identities and tag payloads.

Cards are written rank then suit (``As``, ``Td``, ``2c``); a joker is ``JK``. A tag's NDEF Text
record carries ``<deck-id>:<card>`` (``R1:As``). Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RANKS = "AKQJT98765432"
SUITS = "shdc"
JOKER = "JK"
# A tag that maps to no card still occupies the slot it was dealt into; this marks it.
UNKNOWN = "??"

STANDARD_DECK: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
# The games a table deals, and how many hole cards each seat gets in each.
HOLE_CARDS: dict[str, int] = {"holdem": 2, "omaha": 4, "omaha8": 4}

_DECK_ID = re.compile(r"^[A-Za-z0-9_-]{1,16}$")


class CardError(ValueError):
    """A card, deck id or tag payload that cannot be understood."""


def parse_card(text: str) -> str:
    """The canonical spelling of a card: ``as`` -> ``As``, ``10h`` -> ``Th``, ``jk`` -> ``JK``."""
    if not isinstance(text, str):
        raise CardError(f"a card is a string like 'As' or 'Td', not {text!r}")
    raw = text.strip()
    if raw.upper() in (JOKER, "JOKER"):
        return JOKER
    if len(raw) == 3 and raw[:2] == "10":
        raw = "T" + raw[2]
    if len(raw) != 2:
        raise CardError(
            f"unknown card {text!r}: write rank then suit, ranks {' '.join(RANKS)}, "
            f"suits {' '.join(SUITS)}, or JK for a joker"
        )
    rank, suit = raw[0].upper(), raw[1].lower()
    if rank not in RANKS or suit not in SUITS:
        raise CardError(
            f"unknown card {text!r}: write rank then suit, ranks {' '.join(RANKS)}, "
            f"suits {' '.join(SUITS)}, or JK for a joker"
        )
    return rank + suit


def parse_deck_id(text: str) -> str:
    if not isinstance(text, str) or not _DECK_ID.match(text):
        raise CardError(
            f"bad deck id {text!r}: 1 to 16 letters, digits, '-' or '_' (for example R1 or B2)"
        )
    return text


@dataclass(frozen=True, slots=True)
class TaggedCard:
    """What a tag says: the deck it belongs to and the card."""

    deck: str
    card: str


def parse_ndef_text(payload: str) -> TaggedCard:
    """Parse an NDEF Text record ``<deck-id>:<card>``."""
    if not isinstance(payload, str) or payload.count(":") != 1:
        raise CardError(f"tag text {payload!r} is not '<deck-id>:<card>' (for example 'R1:As')")
    deck, card = payload.split(":")
    return TaggedCard(parse_deck_id(deck.strip()), parse_card(card))


def label_of(text: str | None) -> TaggedCard | None:
    """The card a tag's text names, or None when it names none (no text, or not a label)."""
    if not text or not text.strip():
        return None
    try:
        return parse_ndef_text(text.strip())
    except CardError:
        return None


def normal_uid(uid: str) -> str:
    """A tag UID as the registry keys it: upper-case hex, no separators."""
    return uid.replace(":", "").replace(" ", "").upper()


# The antenna sees a tag more than once as a card passes over it.
REREAD_SECONDS = 0.25


class Rereads:
    """Folds the antenna's repeats: a read of the same key (a tag, or the card it names) again
    within ``window`` seconds of the previous read is the same card passing, not a second one.
    ``t`` None (a read without a time) is never a repeat."""

    def __init__(self, window: float = REREAD_SECONDS) -> None:
        self.window = window
        self._last: tuple[object, float | None] | None = None

    def is_repeat(self, key: object, t: float | None) -> bool:
        last, self._last = self._last, (key, t)
        return (last is not None and key is not None and last[0] == key and t is not None
                and last[1] is not None and 0 <= t - last[1] <= self.window)

    def forget(self) -> None:
        """A new hand or deck check: whatever comes next is a new card."""
        self._last = None

    @property
    def last(self) -> tuple[object, float | None] | None:
        """The last read's key and time (what a snapshot of the table keeps)."""
        return self._last

    def remember(self, key: object, t: float | None) -> None:
        """The last read as a snapshot kept it."""
        self._last = (key, t)
