"""Decks: the registry of a table's decks and enrolled tags, enrollment, and the deck check.

Pure. A card's identity comes from its tag's NDEF Text record (``R1:As``) or, for tags without
one, from the registry's enrolled UID table, made by running the deck through the shoe in
enrollment order (``ENROLL_ORDER``). The deck check names every missing, duplicated, foreign and
unknown card of a deck run through the shoe before it is put in play.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller import events
from controller.cards import (
    JOKER,
    RANKS,
    STANDARD_DECK,
    CardError,
    Rereads,
    TaggedCard,
    label_of,
    normal_uid,
    parse_card,
    parse_deck_id,
)
from controller.datafiles import ProblemsError

# Enrollment order: spades, hearts, diamonds, clubs, each ace to king, as the display prompts.
ENROLL_ORDER: tuple[str, ...] = tuple(
    rank + suit for suit in "shdc" for rank in ("A", *reversed(RANKS[1:])))



class RegistryError(ProblemsError):
    """A deck registry file that cannot be used; ``problems`` lists every one, with its key."""

    subject = "deck registry"


@dataclass
class DeckRegistry:
    """The decks a table uses (two, of different backs) and their enrolled tags."""

    decks: dict[str, str] = field(default_factory=dict)  # deck id -> back colour
    tags: dict[str, TaggedCard] = field(default_factory=dict)  # UID -> card

    def resolve(self, uid: str | None, text: str | None) -> TaggedCard | None:
        """The card of a read: its label when it has one, else its enrolled UID."""
        labelled = label_of(text)
        if labelled is not None or not uid:
            return labelled
        return self.tags.get(normal_uid(uid))

    def enroll(self, deck: str, tags: Mapping[str, str]) -> None:
        """Replace a deck's enrolled tags (``{uid: card}``)."""
        self.tags = {u: c for u, c in self.tags.items() if c.deck != deck}
        for uid, card in tags.items():
            self.tags[normal_uid(uid)] = TaggedCard(deck, card)
        self.decks.setdefault(deck, "")

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"decks": {}}
        for deck, back in sorted(self.decks.items()):
            data["decks"][deck] = {
                "back": back,
                "tags": {uid: c.card for uid, c in sorted(self.tags.items()) if c.deck == deck},
            }
        return data


def registry_from_data(data: Any, origin: str) -> DeckRegistry:
    problems: list[str] = []
    registry = DeckRegistry()
    if not isinstance(data, dict) or not isinstance(data.get("decks"), dict):
        raise RegistryError(origin, ['expected {"decks": {"R1": {"back": ..., "tags": {...}}}}'])
    for key in sorted(set(data) - {"decks"}):
        problems.append(f"{key}: unknown key")
    seen: dict[str, str] = {}
    for deck, entry in data["decks"].items():
        where = f"decks.{deck}"
        try:
            parse_deck_id(deck)
        except CardError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object with 'back' and 'tags'")
            continue
        for key in sorted(set(entry) - {"back", "tags"}):
            problems.append(f"{where}.{key}: unknown key")
        back = entry.get("back", "")
        if not isinstance(back, str):
            problems.append(f"{where}.back: must be a string")
            back = ""
        registry.decks[deck] = back
        tags = entry.get("tags", {})
        if not isinstance(tags, dict):
            problems.append(f"{where}.tags: must map tag UIDs to cards")
            continue
        for uid, card in tags.items():
            try:
                canonical = parse_card(card)
            except CardError as exc:
                problems.append(f"{where}.tags.{uid}: {exc}")
                continue
            key = normal_uid(uid)
            if key in seen:
                problems.append(f"{where}.tags.{uid}: the same tag is enrolled as "
                                f"{seen[key]} too")
                continue
            seen[key] = f"{deck}:{canonical}"
            registry.tags[key] = TaggedCard(deck, canonical)
    if problems:
        raise RegistryError(origin, problems)
    return registry


class EnrollmentError(ValueError):
    pass


class Enrollment:
    """Run a deck through the shoe in ENROLL_ORDER; each new tag UID becomes the next card."""

    def __init__(self, deck: str, registry: DeckRegistry | None = None,
                 jokers: int = 0) -> None:
        self.deck = parse_deck_id(deck)
        self.order = list(ENROLL_ORDER) + [JOKER] * jokers
        self.registry = registry or DeckRegistry()
        self.enrolled: dict[str, str] = {}
        self._reads = Rereads()

    @property
    def expected(self) -> str | None:
        """The card the dealer should run through next (None: the deck is complete)."""
        index = len(self.enrolled)
        return self.order[index] if index < len(self.order) else None

    @property
    def complete(self) -> bool:
        return self.expected is None

    def read(self, uid: str, ms: int | None = None) -> str | None:
        """Enroll one read; returns the card it became, None for a repeat of the last read."""
        key = normal_uid(uid)
        if self._reads.is_repeat(key, None if ms is None else ms / 1000.0):
            return None
        card = self.expected
        if card is None:
            raise EnrollmentError(f"the deck is complete ({len(self.order)} cards); tag {key} "
                                  "is one too many")
        if key in self.enrolled:
            raise EnrollmentError(f"tag {key} was already enrolled as {self.enrolled[key]}: "
                                  f"expected {card} next; start again from {card}")
        other = self.registry.tags.get(key)
        if other is not None and other.deck != self.deck:
            raise EnrollmentError(f"tag {key} is enrolled in deck {other.deck} as "
                                  f"{other.card}: a card of another deck is in this one")
        self.enrolled[key] = card
        return card

    def apply(self) -> DeckRegistry:
        if not self.complete:
            raise EnrollmentError(f"only {len(self.enrolled)} of {len(self.order)} cards "
                                  f"enrolled; next expected {self.expected}")
        self.registry.enroll(self.deck, self.enrolled)
        return self.registry


@dataclass
class DeckCheckResult:
    deck: str
    count: int
    missing: list[str]
    duplicates: list[str]
    foreign: list[str]
    unknown: list[str]
    jokers: int
    times: dict[str, int] = field(default_factory=dict)  # each duplicate: how often read

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicates or self.foreign or self.unknown)

    def as_event(self, t: float) -> events.DeckCheckResult:
        return events.DeckCheckResult(
            deck=self.deck, ok=self.ok, count=self.count, missing=self.missing,
            duplicates=self.duplicates, foreign=self.foreign, unknown=self.unknown,
            jokers=self.jokers, text=self.text(), t=t)

    def report(self) -> dict[str, Any]:
        """The result as ``tablectl deck check --json`` prints it: the event, without a time."""
        out = self.as_event(0.0).to_json()
        del out["t"]
        return out

    def text(self) -> str:
        """What the display shows (ASCII, short)."""
        if self.ok:
            return f"DECK {self.deck} OK: {self.count} cards"
        parts = []
        if self.missing:
            parts.append("missing " + " ".join(self.missing))
        if self.duplicates:
            by_count: dict[int, list[str]] = {}
            for card in self.duplicates:
                by_count.setdefault(self.times.get(card, 2), []).append(card)
            parts.extend(("twice " if times == 2 else f"{times} times ") + " ".join(cards)
                         for times, cards in sorted(by_count.items()))
        if self.foreign:
            parts.append("foreign " + " ".join(self.foreign))
        if self.unknown:
            parts.append(f"{len(self.unknown)} unknown tag(s)")
        return f"DECK {self.deck} BAD: " + "; ".join(parts)


class DeckCheck:
    """Cards of one deck run through the shoe: which are missing, doubled, foreign, unknown."""

    def __init__(self, deck: str, registry: DeckRegistry | None = None) -> None:
        self.deck = parse_deck_id(deck)
        self.registry = registry or DeckRegistry()
        self.seen: dict[str, int] = {}
        self.foreign: list[str] = []
        self.unknown: list[str] = []
        self.jokers = 0
        self.count = 0
        self._reads = Rereads()

    def read(self, uid: str | None, text: str | None, ms: int | None = None) -> None:
        key = normal_uid(uid) if uid else None
        # The antenna's repeat of a tag, or of a card named without its tag (recorded reads).
        if self._reads.is_repeat(key if key is not None else text,
                                 None if ms is None else ms / 1000.0):
            return
        self.add(self.registry.resolve(key, text), key)

    def add(self, card: TaggedCard | None, uid: str | None = None) -> None:
        self.count += 1
        if card is None:
            self.unknown.append(uid or "?")
        elif card.deck != self.deck:
            self.foreign.append(f"{card.deck}:{card.card}")
        elif card.card == JOKER:
            self.jokers += 1
        else:
            self.seen[card.card] = self.seen.get(card.card, 0) + 1

    def result(self) -> DeckCheckResult:
        missing = [c for c in STANDARD_DECK if c not in self.seen]
        duplicates = [c for c in STANDARD_DECK if self.seen.get(c, 0) > 1]
        return DeckCheckResult(self.deck, self.count, missing, duplicates, list(self.foreign),
                               list(self.unknown), self.jokers,
                               {card: self.seen[card] for card in duplicates})
