"""Every event the core emits (and the one the table's daemon adds), a frozen dataclass each.

The core, the display and sound models and the daemon pass these objects and dispatch on them
with ``match``; JSON exists only at the edges (``to_json``: the replay output, the outbox and
the envelope, whose ``data`` schemas in ``contract/asyncapi.json`` a test compares with these
classes). ``to_json`` writes the keys in field order, as the replay contract always had them:
a field made with ``opt()`` is left out when it is None, any other field is always written.
A closed vocabulary (an action, a reason, a kind) is a ``StrEnum``: written as its string.

An irregularity and a ruling are one class a kind (``Irregularity.of``, ``Ruling.of``), each
with the fields its kind carries; ``from_json`` picks the class by ``kind`` (by ``action`` and
``reason`` for a ruling), so that a JSON object comes back as the very event that wrote it.

``dealer``: the table stamps the dealer signed in on every event that does not carry one of its
own (SPEC 1.3), as the last key (``Table._stamped``).

The public view (SPEC section 4: what the ``events`` topic and the dashboard may see) is each
class's to say (``public_view``): the event knows its hole cards, burns, roles and kinds, so
privacy is decided here once, for the table and the hub alike (``contract/views.py`` reads a
stored or received JSON object back into its event with ``read`` and asks it).
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

_JSON_NAME = {"break_": "break"}  # a Python keyword as a field name


def opt(*, written_with: str | None = None) -> Any:
    """A field written only when it is not None (or, ``written_with``, whenever that other
    field is written: null then says something)."""
    return field(default=None, metadata={"omit_none": True, "written_with": written_with})


# (field name, JSON key, omitted when None, written with, its closed vocabulary if it has one)
# per class, in the order written: plain tuples, the fastest to unpack in to_json
_Layout = tuple[tuple[str, str, bool, str | None, type[StrEnum] | None], ...]
_LAYOUTS: dict[type, _Layout] = {}


def _vocabulary(annotation: Any) -> type[StrEnum] | None:
    for kind in (annotation, *typing.get_args(annotation)):
        if isinstance(kind, type) and issubclass(kind, StrEnum):
            return kind
    return None


def _layout(cls: type[Event]) -> _Layout:
    """The class's fields in the order they are written: field order, but the fields a class
    family writes last (``WRITTEN_LAST``) after those of each kind."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        hints, last = typing.get_type_hints(cls), cls.WRITTEN_LAST
        fields = sorted(dataclasses.fields(cls),
                        key=lambda f: last.index(f.name) + 1 if f.name in last else 0)
        layout = _LAYOUTS[cls] = tuple(
            (f.name, _JSON_NAME.get(f.name, f.name), bool(f.metadata.get("omit_none")),
             f.metadata.get("written_with"), _vocabulary(hints[f.name]))
            for f in fields)
    return layout


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    TYPE: ClassVar[str] = ""
    WRITTEN_LAST: ClassVar[tuple[str, ...]] = ()

    @property
    def type(self) -> str:
        return self.TYPE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.TYPE}
        for name, key, omit_none, written_with, vocabulary in _layout(type(self)):
            value = getattr(self, name)
            if value is None:
                if omit_none and (written_with is None or getattr(self, written_with) is None):
                    continue
            elif vocabulary is not None:
                value = str(value)
            out[key] = value
        return out

    def public_view(self, written: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """What anyone may see of this event (None: nothing, it is private altogether): the
        JSON it was read from (``written``) or its own, less what is private. Most events are
        public whole."""
        return dict(self.to_json() if written is None else written)

    def stamped(self, dealer: str) -> Event:
        """This event with the table's dealer, if it has none of its own (an event whose
        ``dealer`` is its subject, a sign-in or a hand's start, keeps its own)."""
        for name, _, omit_none, _, _ in _layout(type(self)):
            if name == "dealer":
                if omit_none and getattr(self, name) is None:
                    return dataclasses.replace(self, dealer=dealer)  # type: ignore[call-arg]
                break
        return self

    @classmethod
    def _variant(cls, data: Mapping[str, Any]) -> builtins.type[Event]:
        """The class of this family that ``data`` is (a family of one: this class)."""
        return cls


# ---------------------------------------------------------------------------- vocabularies

class CardRole(StrEnum):
    """Where a drawn card went (a ``card`` event's ``role``)."""

    HOLE = "hole"
    BURN = "burn"
    BOARD = "board"
    SCRAP = "scrap"  # a card drawn when none was due: set aside, out of the hand
    OUT = "out"  # never in play (another deck's, a duplicate, a premature or overdealt card)


class Street(StrEnum):
    """A hand's betting rounds, each named by the cards dealt before it."""

    PREFLOP = "preflop"
    FLOP = "flop"
    TURN = "turn"
    RIVER = "river"


class Face(StrEnum):
    """How the shoe saw a card leave: face down, as dealt, or face up (exposed)."""

    DOWN = "down"
    UP = "up"


class ShoeState(StrEnum):
    """The shoe's state as the table hears it: its link ``ok``, ``lost`` or at ``fault``, or
    ``reads_lost`` (messages it could not deliver: an event, not a state the shoe stays in)."""

    OK = "ok"
    LOST = "lost"
    FAULT = "fault"
    READS_LOST = "reads_lost"


# What the floor tells a table: the core's inputs (controller/inputs.py) and the contract's
# floor commands (contract/commands.py) share these words; they are here because the contract
# imports nothing else of the core.

class ClockAction(StrEnum):
    """A ``clock`` input's and a ``cmd/clock``'s action on the table's own blind clock."""

    START = "start"  # a structure
    PAUSE = "pause"
    RESUME = "resume"
    STOP = "stop"
    SYNC = "sync"  # follow a clock: its structure, elapsed seconds and whether it runs


class DeckCheckAction(StrEnum):
    """A ``deck_check`` input's and a ``cmd/deck-check``'s action."""

    START = "start"  # a deck named
    FINISH = "finish"
    CANCEL = "cancel"


class HandForHandOrder(StrEnum):
    """The floor's order for hand-for-hand play (a ``hand_for_hand`` input's and a
    ``cmd/hand-for-hand``'s ``state``; the table's own states are ``hand_for_hand`` events')."""

    ON = "on"
    OFF = "off"
    RELEASE = "release"  # deal the next hand


# ---------------------------------------------------------------------------- a hand

@dataclass(frozen=True, slots=True, kw_only=True)
class HandStarted(Event):
    TYPE: ClassVar[str] = "hand.started"
    hand: int
    game: str
    button: int
    seats: list[int]
    level: int | None
    small_blind: int | None  # None: no small blind posted (dead small blind)
    big_blind: int
    dead_button: bool
    deck: str | None  # None: the deck went in without an id; its first card names it
    redeal: int
    dealer: str | None
    t: float
    waiting: list[int] | None = opt()  # newcomers dealt around until the button passes
    waiting_rule: str | None = opt()
    betting: str | None = opt()  # dealer's choice: the betting declared with the game
    blinds: dict[str, int] | None = opt()  # the level's amounts: sb, bb, ante (with a clock)


@dataclass(frozen=True, slots=True, kw_only=True)
class Card(Event):
    TYPE: ClassVar[str] = "card"
    hand: int
    n: int  # the draw's number within the hand
    card: str
    deck: str | None
    role: CardRole
    street: Street
    seat: int | None = opt()
    face: Face | None = opt()  # up when the shoe saw its face (never written down)
    boxed: bool | None = opt()
    tag: str | None = opt()
    dealt_to: int | None = opt()  # an exposed hole card turned burn: the seat it was dealt to
    replacement: bool | None = opt()
    premature: bool | None = opt()
    overdealt: bool | None = opt()
    t: float
    dealer: str | None = opt()

    def public_view(self, written: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """A hole or burn card the table did not see face up is hidden, and so is a card out
        of play unless it was a premature board card turned up (a duplicate or an extra card
        may be the twin of someone's hole card)."""
        out = dict(self.to_json() if written is None else written)
        hidden = self.role in (CardRole.HOLE, CardRole.BURN) and self.face != Face.UP
        if hidden or (self.role == CardRole.OUT and not self.premature):
            out["card"] = None
            out.pop("tag", None)
            out.pop("deck", None)
        return out


class IrregularityKind(StrEnum):
    EXPOSED_CARD = "exposed_card"
    BOXED_CARD = "boxed_card"
    JOKER = "joker"
    EXTRA_CARD = "extra_card"
    MISSING_CARD = "missing_card"
    PREMATURE_CARD = "premature_card"
    TOO_MANY_BOARD_CARDS = "too_many_board_cards"
    MISSING_BURN = "missing_burn"
    DUPLICATE_CARD = "duplicate_card"
    FOREIGN_CARD = "foreign_card"
    UNKNOWN_TAG = "unknown_tag"
    SHOE_FAULT = "shoe_fault"  # also the reads the shoe dropped from a full queue
    WRONG_GAME = "wrong_game"


@dataclass(frozen=True, slots=True, kw_only=True)
class Irregularity(Event):
    """Something at the table that needs a ruling: one class a kind, each with the fields its
    kind carries, written between ``kind`` and ``t``."""

    TYPE: ClassVar[str] = "irregularity"
    WRITTEN_LAST: ClassVar[tuple[str, ...]] = ("t", "dealer")
    KIND: ClassVar[IrregularityKind]
    CARD_SEEN: ClassVar[bool] = False  # whether everyone at the table saw the card
    hand: int
    kind: IrregularityKind
    t: float
    dealer: str | None = opt()

    def public_view(self, written: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The card and its tag are shown only for a kind whose card the table saw (face up,
        on the board, or of another deck: no one's hole card)."""
        out = dict(self.to_json() if written is None else written)
        if not self.CARD_SEEN:
            out.pop("card", None)
            out.pop("tag", None)
        return out

    @classmethod
    def of(cls, kind: IrregularityKind) -> type[Irregularity]:
        return _IRREGULARITIES[kind]

    @classmethod
    def _variant(cls, data: Mapping[str, Any]) -> type[Event]:
        kind = data.get("kind")
        return _IRREGULARITIES.get(kind, cls) if isinstance(kind, str) else cls


@dataclass(frozen=True, slots=True, kw_only=True)
class CardIrregularity(Irregularity):
    """An irregularity a drawn card made: the card (``??`` for a tag that maps to none), the
    tag it was read from, and its draw's number within the hand."""

    card: str
    tag: str | None = opt()
    n: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ExposedCard(CardIrregularity):
    """A hole card drawn face up (``exposed``: the second or later of the deal)."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.EXPOSED_CARD
    CARD_SEEN: ClassVar[bool] = True
    kind: IrregularityKind = KIND
    seat: int
    exposed: int | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class BoxedCard(CardIrregularity):
    KIND: ClassVar[IrregularityKind] = IrregularityKind.BOXED_CARD
    CARD_SEEN: ClassVar[bool] = True
    kind: IrregularityKind = KIND
    street: Street


@dataclass(frozen=True, slots=True, kw_only=True)
class JokerDrawn(CardIrregularity):
    KIND: ClassVar[IrregularityKind] = IrregularityKind.JOKER
    CARD_SEEN: ClassVar[bool] = True
    kind: IrregularityKind = KIND
    street: Street


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtraCard(CardIrregularity):
    """A hole card past the deal, within its rhythm (``extra``: how many so far)."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.EXTRA_CARD
    kind: IrregularityKind = KIND
    extra: int
    declared: str | None = opt()  # dealer's choice: the game declared


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingCards(Irregularity):
    """Betting closed with cards missing: hole cards per seat, or a street's count."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.MISSING_CARD
    kind: IrregularityKind = KIND
    street: Street
    missing: dict[str, int] | int


@dataclass(frozen=True, slots=True, kw_only=True)
class PrematureCard(CardIrregularity):
    """A card of ``street`` drawn while the betting on ``betting`` was open."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.PREMATURE_CARD
    kind: IrregularityKind = KIND
    street: Street
    betting: Street


@dataclass(frozen=True, slots=True, kw_only=True)
class TooManyBoardCards(CardIrregularity):
    """A fourth flop card, or a card after the river (``flop_cards``: an overdealt flop's)."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.TOO_MANY_BOARD_CARDS
    CARD_SEEN: ClassVar[bool] = True
    kind: IrregularityKind = KIND
    street: Street
    flop_cards: int | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingBurn(Irregularity):
    """A street dealt without its burn: ``n`` is the draw taken for the burn."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.MISSING_BURN
    kind: IrregularityKind = KIND
    n: int
    street: Street


@dataclass(frozen=True, slots=True, kw_only=True)
class DuplicateCard(CardIrregularity):
    KIND: ClassVar[IrregularityKind] = IrregularityKind.DUPLICATE_CARD
    kind: IrregularityKind = KIND


@dataclass(frozen=True, slots=True, kw_only=True)
class ForeignCard(CardIrregularity):
    KIND: ClassVar[IrregularityKind] = IrregularityKind.FOREIGN_CARD
    CARD_SEEN: ClassVar[bool] = True
    kind: IrregularityKind = KIND
    in_play_deck: str  # the hand's deck


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownTag(CardIrregularity):
    """A tag that maps to no card, and where it went (if the deal says)."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.UNKNOWN_TAG
    kind: IrregularityKind = KIND
    seat: int | None = opt()
    street: Street | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeFault(Irregularity):
    """The shoe's link lost or a part failed mid-hand (``state`` lost or fault), or its reads
    dropped (``reads_lost``, with ``lost`` messages, ``cards`` of them card reads)."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.SHOE_FAULT
    kind: IrregularityKind = KIND
    state: ShoeState  # lost, fault or reads_lost
    part: str
    lost: int | None = opt()
    cards: int | None = opt()
    detail: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class WrongGame(Irregularity):
    """Dealer's choice: an Omaha game declared, two cards a seat dealt."""

    KIND: ClassVar[IrregularityKind] = IrregularityKind.WRONG_GAME
    kind: IrregularityKind = KIND
    street: Street
    declared: str


# The class of each kind (a StrEnum member is its string: looked up by either).
_IRREGULARITIES: dict[str, type[Irregularity]] = {cls.KIND: cls for cls in (
    ExposedCard, BoxedCard, JokerDrawn, ExtraCard, MissingCards, PrematureCard,
    TooManyBoardCards, MissingBurn, DuplicateCard, ForeignCard, UnknownTag, ShoeFault,
    WrongGame)}


class RulingAction(StrEnum):
    """What a ruling tells the dealer to do (and what a house rule chooses among)."""

    MISDEAL = "misdeal"
    REPLACE_EXPOSED = "replace_exposed"
    SCRAP_AND_REPLACE = "scrap_and_replace"
    USE_AS_BURN = "use_as_burn"
    CALL_FLOOR = "call_floor"
    RESHUFFLE_REDEAL = "reshuffle_redeal"
    SET_ASIDE_TURN = "set_aside_turn"
    REDEAL_FLOP = "redeal_flop"
    SCRAMBLE_FLOP = "scramble_flop"
    BOARD_STANDS = "board_stands"
    VOID_HAND = "void_hand"


class RulingReason(StrEnum):
    """Why, where the SPEC names a reason: a misdeal says why, the floor is told why."""

    EXPOSED_CARD = "exposed_card"
    EXPOSED_FIRST_TWO = "exposed_first_two"
    EXPOSED_TWO_CARDS = "exposed_two_cards"
    BOXED_TWO_CARDS = "boxed_two_cards"
    WRONG_CARD_COUNT = "wrong_card_count"
    TOO_MANY_BOARD_CARDS = "too_many_board_cards"
    MISSING_BURN = "missing_burn"
    DUPLICATE_CARD = "duplicate_card"
    FOREIGN_CARD = "foreign_card"
    UNKNOWN_TAG = "unknown_tag"
    SHOE_FAULT = "shoe_fault"
    WRONG_GAME = "wrong_game"


# Rulings whose text names only cards shown to the table (an exposed or boxed card, a flop);
# any other ruling's text may name a hole or burn card.
_TEXT_NAMES_SHOWN_CARDS_ONLY = frozenset({
    RulingAction.REPLACE_EXPOSED, RulingAction.SCRAP_AND_REPLACE, RulingAction.REDEAL_FLOP,
    RulingAction.SCRAMBLE_FLOP, RulingAction.BOARD_STANDS})
_CARD_IN_TEXT = re.compile(r"\b[AKQJT2-9][shdc]\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class Ruling(Event):
    """The ruling an irregularity gets, citing the profile's rule and its source where the
    ruling is the house's. A ruling with fields of its own is a class of its own, picked by
    its action and reason (``RULES_ON``); this class is every other one."""

    TYPE: ClassVar[str] = "ruling"
    WRITTEN_LAST: ClassVar[tuple[str, ...]] = ("t", "dealer")
    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = ()
    hand: int
    action: RulingAction
    reason: RulingReason | None = opt()
    text: str
    profile: str
    rule: str | None = opt()
    source: str | None = opt()
    t: float
    dealer: str | None = opt()

    def public_view(self, written: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The text as the dealer reads it where it names only cards the table saw; any
        other's cards each read "a card"."""
        out = dict(self.to_json() if written is None else written)
        if self.action not in _TEXT_NAMES_SHOWN_CARDS_ONLY:
            out["text"] = _CARD_IN_TEXT.sub("a card", str(self.text or ""))
        return out

    @classmethod
    def of(cls, action: RulingAction, reason: RulingReason | None) -> type[Ruling]:
        return _RULINGS.get((action, reason), Ruling)

    @classmethod
    def _variant(cls, data: Mapping[str, Any]) -> type[Event]:
        action, reason = data.get("action"), data.get("reason")
        if not isinstance(action, str) or not isinstance(reason, str | None):
            return cls
        return _RULINGS.get((action, reason), cls)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExposedCardRuling(Ruling):
    """Deal on: ``seat`` gets the next card after the deal."""

    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = (
        (RulingAction.REPLACE_EXPOSED, None),)
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownTagRuling(Ruling):
    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = (
        (RulingAction.CALL_FLOOR, RulingReason.UNKNOWN_TAG),)
    seat: int | None = opt()
    street: Street | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeclaredGameRuling(Ruling):
    """A ruling on a deal that broke the game the dealer declared (dealer's choice)."""

    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = (
        (RulingAction.CALL_FLOOR, RulingReason.WRONG_GAME),
        (RulingAction.MISDEAL, RulingReason.WRONG_CARD_COUNT))
    declared: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class PrematureCardRuling(Ruling):
    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = (
        (RulingAction.RESHUFFLE_REDEAL, None), (RulingAction.SET_ASIDE_TURN, None))
    street: Street  # the street dealt early


@dataclass(frozen=True, slots=True, kw_only=True)
class FlopRedealRuling(Ruling):
    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = (
        (RulingAction.REDEAL_FLOP, RulingReason.TOO_MANY_BOARD_CARDS),)
    returned: list[str]  # the flop's cards, back into the stub


@dataclass(frozen=True, slots=True, kw_only=True)
class FlopScrambleRuling(Ruling):
    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = (
        (RulingAction.SCRAMBLE_FLOP, RulingReason.TOO_MANY_BOARD_CARDS),)
    candidates: list[str]  # the four the floor picks the burn from


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingBurnRuling(Ruling):
    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = (
        (RulingAction.BOARD_STANDS, None), (RulingAction.CALL_FLOOR, RulingReason.MISSING_BURN))
    reassigned: dict[str, str]  # the card taken for the burn, now a board card


@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeFaultRuling(Ruling):
    RULES_ON: ClassVar[tuple[tuple[RulingAction, RulingReason | None], ...]] = (
        (RulingAction.CALL_FLOOR, RulingReason.SHOE_FAULT),)
    part: str  # link, reader, ..., restart, reads
    lost: int | None = opt()
    cards: int | None = opt()


# The class of each ruling with fields of its own, by its action and reason.
_RULINGS: dict[tuple[str, str | None], type[Ruling]] = {
    rules_on: cls for cls in (ExposedCardRuling, UnknownTagRuling, DeclaredGameRuling,
                              PrematureCardRuling, FlopRedealRuling, FlopScrambleRuling,
                              MissingBurnRuling, ShoeFaultRuling)
    for rules_on in cls.RULES_ON}


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardResolved(Event):
    """The floor picked the burn from a scrambled four-card flop."""

    TYPE: ClassVar[str] = "board.resolved"
    hand: int
    street: Street
    burn: str
    board: list[str]
    t: float
    dealer: str | None = opt()

    def public_view(self, written: dict[str, Any] | None = None) -> dict[str, Any] | None:
        out = dict(self.to_json() if written is None else written)
        out.pop("burn", None)  # the burn the floor picked: the table did not see which
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class HandEnded(Event):
    TYPE: ClassVar[str] = "hand.ended"
    hand: int
    outcome: str  # complete, misdeal, void
    hole: dict[str, list[str]]
    board: list[str]
    burns: list[str]
    scrap: list[str]
    out: list[str]
    level: int | None
    button: int
    draws: int
    flop_unresolved: list[str] | None = opt()
    ended_by: str | None = opt()
    t: float
    dealer: str | None = opt()

    def public_view(self, written: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Without the hole cards and burns: how many cards each seat held instead, and the
        cards out of play that are none of them."""
        out = dict(self.to_json() if written is None else written)
        hole = self.hole or {}
        secret = {card for cards in hole.values() for card in cards}
        secret.update(self.burns or ())
        out.pop("hole", None)
        out.pop("burns", None)
        out["out"] = [card for card in self.out or () if card not in secret]
        out["hole_counts"] = {seat: len(cards) for seat, cards in hole.items()}
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class HandRecord(Event):
    TYPE: ClassVar[str] = "hand.record"
    hand: int
    game: str
    outcome: str
    seats: list[int]
    button: int
    hole: dict[str, list[str]]
    board: list[str]
    burns: list[str]
    scrap: list[str]
    out: list[str]
    level: int | None
    best: dict[str, Any] | None
    t: float
    dealer: str | None = opt()
    best_hand: dict[str, list[int]] | None = opt()  # the seats holding the best high (low)

    def public_view(self, written: dict[str, Any] | None = None) -> dict[str, Any] | None:
        return None  # every hole card: for the recorder and the roles granted it


@dataclass(frozen=True, slots=True, kw_only=True)
class HandLevel(Event):
    """The level changed before the hand's first card (houses that change it then)."""

    TYPE: ClassVar[str] = "hand.level"
    hand: int
    level: int | None
    t: float
    dealer: str | None = opt()
    blinds: dict[str, int] | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class CardIgnored(Event):
    TYPE: ClassVar[str] = "card.ignored"
    card: str
    deck: str | None
    reason: str
    hand: int | None
    t: float
    dealer: str | None = opt()

    def public_view(self, written: dict[str, Any] | None = None) -> dict[str, Any] | None:
        return None  # a card read with no hand in progress: may be anyone's next hole card


# ---------------------------------------------------------------------------- the table

@dataclass(frozen=True, slots=True, kw_only=True)
class TableSetup(Event):
    TYPE: ClassVar[str] = "table.setup"
    effective: str  # now, next_hand
    game: str
    seats: list[int] | None
    button: int | None
    profile: str
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class Seating(Event):
    TYPE: ClassVar[str] = "seating"
    seats: list[int]
    effective: str
    t: float
    moves: list[dict[str, Any]] | None = opt()  # players moved between tables
    dealer: str | None = opt()
    version: int | None = opt()  # the hub's version of the table's seating (hub/seating.py)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckChanged(Event):
    TYPE: ClassVar[str] = "deck"
    state: str  # removed, reinserted
    deck: str | None
    hand: int | None
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeChanged(Event):
    TYPE: ClassVar[str] = "shoe"
    state: ShoeState  # ok, lost, fault
    hand: int | None
    t: float
    detail: str | None = opt()
    resumed: bool | None = opt()
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeReadsLost(Event):
    TYPE: ClassVar[str] = "shoe"
    state: ShoeState = ShoeState.READS_LOST
    lost: int | None
    cards: int | None  # None: the shoe does not say how many were card reads
    hand: int | None
    t: float
    detail: str | None = opt()
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class GameDeclared(Event):
    TYPE: ClassVar[str] = "game.declared"
    game: str
    betting: str
    label: str
    default: bool
    hand: int | None = opt()  # declared for the hand whose deck is in
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerSignedIn(Event):
    TYPE: ClassVar[str] = "dealer"
    dealer: str | None
    t: float


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerSummary(Event):
    TYPE: ClassVar[str] = "dealer.summary"
    dealer: str | None
    hands: int
    minutes: float
    hands_per_hour: float | None  # None before a minute has passed
    t: float


@dataclass(frozen=True, slots=True, kw_only=True)
class HandForHandChanged(Event):
    TYPE: ClassVar[str] = "hand_for_hand"
    state: str  # playing, waiting, off, released, dealt_early
    hand: int | None = opt()
    text: str | None = opt()
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ShotClock(Event):
    TYPE: ClassVar[str] = "shot_clock"
    state: str  # started, countdown, expired, cancelled
    seconds: float | None = opt()
    countdown: float | None = opt()
    reason: str | None = opt()
    hand: int | None
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class FloorCalled(Event):
    TYPE: ClassVar[str] = "floor.called"
    hand: int | None
    t: float
    dealer: str | None = opt()


# ---------------------------------------------------------------------------- deck checks

@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckStarted(Event):
    TYPE: ClassVar[str] = "deck_check.started"
    deck: str
    text: str
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckCard(Event):
    TYPE: ClassVar[str] = "deck_check.card"
    deck: str
    card: str
    card_deck: str | None
    count: int
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckCancelled(Event):
    TYPE: ClassVar[str] = "deck_check.cancelled"
    deck: str
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class DeckCheckResult(Event):
    TYPE: ClassVar[str] = "deck_check.result"
    deck: str
    ok: bool
    count: int
    missing: list[str]
    duplicates: list[str]
    foreign: list[str]
    unknown: list[str]
    jokers: int
    text: str
    t: float
    dealer: str | None = opt()


# ---------------------------------------------------------------------------- the clock

@dataclass(frozen=True, slots=True, kw_only=True)
class ClockChanged(Event):
    TYPE: ClassVar[str] = "clock"
    state: str  # running, paused, stopped, synced
    structure: str
    elapsed: float
    drift: float | None = opt()  # synced: how far the table's count was from the venue's
    running: bool | None = opt()  # synced: whether the venue clock runs
    t: float
    reason: str | None = opt()  # paused for a floor call
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockHold(Event):
    """The table asks the hub to pause the venue clock (a floor call, where the house says)."""

    TYPE: ClassVar[str] = "clock.hold"
    reason: str
    hand: int | None
    rule: str
    source: str
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class Level(Event):
    TYPE: ClassVar[str] = "level"
    level: int
    sb: int
    bb: int
    ante: int
    minutes: float
    note: str | None = opt()
    # The level after this one; null when a break comes first; neither key in the last level.
    next: dict[str, int] | None = opt(written_with="break_next")
    break_next: bool | None = opt()
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakStarted(Event):
    TYPE: ClassVar[str] = "break"
    state: str = "started"
    minutes: float
    note: str | None
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakEnded(Event):
    TYPE: ClassVar[str] = "break"
    state: str = "ended"
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class Announcement(Event):
    TYPE: ClassVar[str] = "announcement"
    text: str
    level: int | None  # None: announced with a break
    break_: bool
    t: float
    dealer: str | None = opt()


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockWarning(Event):
    TYPE: ClassVar[str] = "clock.warning"
    seconds_left: float
    level: int | None  # None: a break is ending
    break_: bool
    t: float
    dealer: str | None = opt()


# ---------------------------------------------------------------------------- the daemon's

@dataclass(frozen=True, slots=True, kw_only=True)
class JournalQuarantined(Event):
    """A journal line the table's daemon could not replay at a start (unreadable, or the core
    failed on it), set aside in the outbox: the daemon's event, not the core's."""

    TYPE: ClassVar[str] = "journal.quarantined"
    line: int  # the journal line's id
    reason: str
    hand: None = None  # of no hand (written: the envelope's null)
    t: float


EVENT_CLASSES: tuple[type[Event], ...] = (
    HandStarted, Card, *_IRREGULARITIES.values(), Ruling, *dict.fromkeys(_RULINGS.values()),
    BoardResolved, HandEnded, HandRecord, HandLevel, CardIgnored, TableSetup, Seating,
    DeckChanged, ShoeChanged, ShoeReadsLost, GameDeclared, DealerSignedIn, DealerSummary,
    HandForHandChanged, ShotClock, FloorCalled, DeckCheckStarted, DeckCheckCard,
    DeckCheckCancelled, DeckCheckResult, ClockChanged, ClockHold, Level, BreakStarted, BreakEnded,
    Announcement, ClockWarning, JournalQuarantined,
)

# The class a JSON object's type names: a family (an irregularity, a ruling) then picks its
# member; two types have two shapes, told apart by their state.
_BY_TYPE_AND_STATE: dict[tuple[str, str | None], type[Event]] = {
    ("shoe", "reads_lost"): ShoeReadsLost, ("break", "started"): BreakStarted,
    ("break", "ended"): BreakEnded}
_BY_TYPE: dict[str, type[Event]] = {
    **{cls.TYPE: cls for cls in EVENT_CLASSES if cls not in (ShoeReadsLost, BreakStarted,
                                                             BreakEnded)},
    Irregularity.TYPE: Irregularity, Ruling.TYPE: Ruling}
_FIELD_NAME = {key: name for name, key in _JSON_NAME.items()}


class EventDataError(ValueError):
    """A JSON object that is not one of the core's events."""


def _class_of(data: Mapping[str, Any]) -> type[Event] | None:
    kind, state = data.get("type"), data.get("state")
    cls = (_BY_TYPE_AND_STATE.get((str(kind), state if isinstance(state, str) else None))
           or _BY_TYPE.get(str(kind)))
    return cls._variant(data) if cls is not None else None


def from_json(data: dict[str, Any]) -> Event:
    """The typed event a JSON object written by ``to_json`` stands for (the outbox, a recorded
    replay): ``EventDataError`` if it is none."""
    cls = _class_of(data)
    if cls is None:
        raise EventDataError(f"no event of type {data.get('type')!r}")
    kind = cls.TYPE
    values = {_FIELD_NAME.get(k, k): v for k, v in data.items() if k != "type"}
    try:
        for name, _, _, _, vocabulary in _layout(cls):
            if vocabulary is not None and values.get(name) is not None:
                values[name] = vocabulary(values[name])
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise EventDataError(f"not a {kind} event: {exc}") from None


def read(data: Mapping[str, Any]) -> Event | None:
    """The event a JSON object stands for as far as it says, to ask it for its public view:
    ``from_json``'s class and values, but a field the object leaves out is None, a value
    outside its vocabulary stays as written, and a key of no field is passed by (a stored
    envelope's event, a peer's partial one). None if no class has its type."""
    cls = _class_of(data)
    if cls is None:
        return None
    values = {}
    for name, key, _, _, vocabulary in _layout(cls):
        value = data.get(key)
        if vocabulary is not None and value is not None:
            # outside the vocabulary: the event decides on it as written
            with contextlib.suppress(ValueError):
                value = vocabulary(value)
        values[name] = value
    return cls(**values)
