"""What goes into the table core: shoe reads, dealer gestures, seating, clock commands.

Each input carries ``t``, seconds on the shoe's (or the daemon's monotonic) clock, or ``None`` when
the source gave none: the core then treats it as happening at the last time it knows.
Pure: these are plain values; ``parse_input`` turns a JSON object (a replay line, a journal's)
into one, reporting every problem with its key. What the floor sends has a typed builder of its
own (``seats_change``, ``clock_command``, ``deck_check_command``, ``hand_for_hand``), which
``parse_input`` uses for those lines and the composition root for the contract's typed commands:
a value is refused in the same words whichever way it came.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.cards import (
    HOLE_CARDS,
    CardError,
    normal_uid,
    parse_card,
    parse_deck_id,
    parse_ndef_text,
)
from controller.clock import MAX_CLOCK_SECONDS, STRUCTURE_NAME
from controller.events import ClockAction, DeckCheckAction, Face, HandForHandOrder, ShoeState
from controller.seating import SEAT_MAX, SEAT_MIN, SeatingError, normalise_seats

GAMES = tuple(HOLE_CARDS)
GESTURES = ("tap", "double_tap", "hold", "long_hold")
SHOE_STATES = tuple(ShoeState)
# What failed, for a fault: the shoe's parts (PROTOCOL.md FAULT codes) or its restart.
SHOE_PARTS = ("reader", "exit_sensor", "stack_sensor", "firmware", "restart")
CLOCK_ACTIONS = tuple(ClockAction)
HAND_FOR_HAND = tuple(HandForHandOrder)
DECK_CHECK_ACTIONS = tuple(DeckCheckAction)


@dataclass(frozen=True, slots=True)
class Setup:
    game: str | None = None
    seats: tuple[int, ...] | None = None
    button: int | None = None
    hand: int | None = None
    tags: tuple[tuple[str, str], ...] = ()  # enrolled UID -> "<deck>:<card>"
    t: float | None = None


@dataclass(frozen=True, slots=True)
class DeckIn:
    deck: str | None
    t: float | None = None


@dataclass(frozen=True, slots=True)
class DeckOut:
    t: float | None = None


@dataclass(frozen=True, slots=True)
class CardRead:
    """One card drawn from the shoe: a known card (``card``/``deck``), a bare tag UID, or
    neither (an unreadable tag: a card went out that the shoe could not identify)."""

    card: str | None
    deck: str | None
    tag: str | None
    face: Face = Face.DOWN
    boxed: bool = False
    t: float | None = None


@dataclass(frozen=True, slots=True)
class Gesture:
    gesture: str
    t: float | None = None


@dataclass(frozen=True, slots=True)
class SeatMove:
    """A player the floor moves between tables: leaving ``seat`` for ``table``'s ``other_seat``
    (``leaves``), or arriving in ``seat`` from it; the table's display says so."""

    seat: int
    leaves: bool
    table: str
    other_seat: int
    player: str | None = None  # the player's name, when the hub keeps a roster

    def to_json(self) -> dict[str, Any]:
        named = {"player": self.player} if self.player is not None else {}
        if self.leaves:
            return {"seat": self.seat, "to_table": self.table, "to_seat": self.other_seat,
                    **named}
        return {"seat": self.seat, "from_table": self.table, "from_seat": self.other_seat,
                **named}


@dataclass(frozen=True, slots=True)
class SeatsChange:
    seats: tuple[int, ...]
    t: float | None = None
    moves: tuple[SeatMove, ...] = ()
    # The hub's version of this table's seating (None: a seating from elsewhere, a tool): a
    # table never goes back to an older one than it holds (hub/seating.py).
    version: int | None = None


@dataclass(frozen=True, slots=True)
class ClockCommand:
    action: ClockAction
    structure: str | None = None
    t: float | None = None
    elapsed: float | None = None  # sync: seconds on the venue clock at t
    running: bool = True  # sync: whether the venue clock runs


@dataclass(frozen=True, slots=True)
class HandForHand:
    state: HandForHandOrder
    t: float | None = None


@dataclass(frozen=True, slots=True)
class ShoeStatus:
    """The shoe's state (ok, lost, fault), or ``reads_lost``: the shoe dropped ``lost``
    messages it could not deliver, ``cards`` of them card reads (None: not known)."""

    state: ShoeState
    detail: str | None = None
    t: float | None = None
    lost: int | None = None
    cards: int | None = None
    part: str | None = None  # a fault's failing part (SHOE_PARTS); None: the reader


@dataclass(frozen=True, slots=True)
class DeckCheckCommand:
    action: DeckCheckAction
    deck: str | None = None
    t: float | None = None


@dataclass(frozen=True, slots=True)
class DealerSignIn:
    dealer: str | None
    t: float | None = None


Input = (
    Setup | DeckIn | DeckOut | CardRead | Gesture | SeatsChange | ClockCommand | ShoeStatus
    | DealerSignIn | DeckCheckCommand | HandForHand
)


class InputError(ValueError):
    """An input object that is not what the contract says; lists every problem with its key."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


_ALLOWED: dict[str, tuple[str, ...]] = {
    "setup": ("game", "seats", "button", "hand", "tags"),
    "deck_in": ("deck",),
    "deck_out": (),
    "card": ("card", "deck", "tag", "ndef", "face", "boxed", "unreadable"),
    "button": ("gesture",),
    "seats": ("seats", "moves", "version"),
    "clock": ("structure", "action", "elapsed", "running"),
    "shoe": ("state", "detail", "lost", "cards", "part"),
    "dealer": ("dealer",),
    "deck_check": ("action", "deck"),
    "hand_for_hand": ("state",),
}


def parse_input(obj: Any) -> Input:
    """Turn a decoded JSON object into an input; raise ``InputError`` naming every bad key."""
    if not isinstance(obj, Mapping):
        raise InputError([f"an input is a JSON object, not {type(obj).__name__}"])
    kind = obj.get("type")
    if kind not in _ALLOWED:
        raise InputError([f"type: {kind!r} is not one of {', '.join(_ALLOWED)}"])
    problems: list[str] = []
    allowed = set(_ALLOWED[kind]) | {"type", "t"}
    for key in obj:
        if key not in allowed:
            problems.append(f"{key}: unknown key for a {kind!r} line "
                            f"(allowed: {', '.join(sorted(allowed))})")
    t = obj.get("t")
    if t is not None and (isinstance(t, bool) or not isinstance(t, int | float)
                          or not math.isfinite(t)):
        problems.append(f"t: must be a number of seconds, not {t!r}")
        t = None
    t_value = float(t) if t is not None else None
    result: Input | None = None
    try:
        result = _BUILDERS[kind](obj, t_value, problems)
    except (CardError, SeatingError) as exc:
        problems.append(str(exc))
    if problems or result is None:
        raise InputError(problems or ["unreadable input"])
    return result


def _opt_str(obj: Mapping[str, Any], key: str, problems: list[str]) -> str | None:
    return _str_or_none(key, obj.get(key), problems)


def _str_or_none(key: str, value: Any, problems: list[str]) -> str | None:
    if value is not None and not isinstance(value, str):
        problems.append(f"{key}: must be a string, not {value!r}")
        return None
    return value


def _collected(problems: list[str], build: Callable[[], Input]) -> Input | None:
    """What a typed builder makes, or None with its problems added to ``problems``."""
    try:
        return build()
    except InputError as exc:
        problems.extend(exc.problems)
        return None


def _setup(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    game = obj.get("game")
    if game is not None and game not in GAMES:
        problems.append(f"game: {game!r} is not one of {', '.join(GAMES)}")
    seats = obj.get("seats")
    seat_tuple: tuple[int, ...] | None = None
    if seats is not None:
        if not isinstance(seats, list):
            problems.append(f"seats: must be a list of seat numbers, not {seats!r}")
        else:
            try:
                seat_tuple = normalise_seats(seats)
            except SeatingError as exc:
                problems.append(f"seats: {exc}")
    button = obj.get("button")
    if button is not None and (isinstance(button, bool) or not isinstance(button, int)):
        problems.append(f"button: must be a seat number, not {button!r}")
    if seat_tuple is not None and isinstance(button, int) and button not in seat_tuple:
        problems.append(f"button: seat {button} is not one of the seats {list(seat_tuple)}")
    hand = obj.get("hand")
    if hand is not None and (isinstance(hand, bool) or not isinstance(hand, int) or hand < 1):
        problems.append(f"hand: must be a hand number >= 1, not {hand!r}")
    tags_obj = obj.get("tags", {})
    tags: list[tuple[str, str]] = []
    if not isinstance(tags_obj, dict):
        problems.append("tags: must be an object mapping tag UIDs to '<deck>:<card>'")
    else:
        for uid, text in tags_obj.items():
            try:
                tagged = parse_ndef_text(text)
            except CardError as exc:
                problems.append(f"tags.{uid}: {exc}")
                continue
            tags.append((normal_uid(uid), f"{tagged.deck}:{tagged.card}"))
    return Setup(game, seat_tuple, button, hand, tuple(tags), t)


def _deck_in(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    deck = _opt_str(obj, "deck", problems)
    return DeckIn(parse_deck_id(deck) if deck is not None else None, t)


def _deck_out(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    return DeckOut(t)


def _card(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    card = _opt_str(obj, "card", problems)
    deck = _opt_str(obj, "deck", problems)
    tag = _opt_str(obj, "tag", problems)
    ndef = _opt_str(obj, "ndef", problems)
    face = obj.get("face", Face.DOWN)
    if face not in tuple(Face):
        problems.append(f"face: {face!r} is not 'down' or 'up'")
        face = Face.DOWN
    boxed = obj.get("boxed", False)
    if not isinstance(boxed, bool):
        problems.append(f"boxed: must be true or false, not {boxed!r}")
    if ndef is not None:
        try:
            tagged = parse_ndef_text(ndef)
        except CardError as exc:
            problems.append(f"ndef: {exc}")
        else:
            if card is not None or deck is not None:
                problems.append("ndef: give either ndef or card/deck, not both")
            card, deck = tagged.card, tagged.deck
    unreadable = obj.get("unreadable", False)
    if not isinstance(unreadable, bool):
        problems.append(f"unreadable: must be true or false, not {unreadable!r}")
    elif unreadable and (card is not None or tag is not None):
        problems.append("unreadable: an unreadable tag has no 'card', 'ndef' or 'tag'")
    elif card is None and tag is None and not unreadable:
        problems.append("card: a card line needs 'card' (or 'ndef') or 'tag' (or "
                        "'unreadable': true)")
    if tag is not None and not tag.strip():
        problems.append("tag: empty tag UID")
    try:
        card_value = parse_card(card) if card is not None else None
    except CardError as exc:
        problems.append(f"card: {exc}")
        card_value = None
    deck_value = None
    if deck is not None:
        try:
            deck_value = parse_deck_id(deck)
        except CardError as exc:
            problems.append(f"deck: {exc}")
    return CardRead(card_value, deck_value, normal_uid(tag) if tag else None, Face(face),
                    bool(boxed), t)


def _gesture(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    gesture = obj.get("gesture")
    if gesture not in GESTURES:
        problems.append(f"gesture: {gesture!r} is not one of {', '.join(GESTURES)}")
        return None
    return Gesture(gesture, t)


def _seats(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    seats: Any = obj.get("seats")  # any JSON value: the builder says what is wrong with it
    return _collected(problems, lambda: seats_change(
        seats, obj.get("moves", []), obj.get("version"), t=t))


def seats_change(seats: Sequence[int], moves: Sequence[Mapping[str, Any]] = (),
                 version: int | None = None, *, t: float | None = None) -> SeatsChange:
    """The table's whole seating (a ``seats`` line, the floor's ``cmd/seating``): the seats
    taken, the players ``moves`` brings or takes away, the hub's ``version`` of it;
    ``InputError`` names every problem."""
    problems: list[str] = []
    if not isinstance(seats, list | tuple):
        raise InputError([f"seats: must be a list of seat numbers, not {seats!r}"])
    try:
        seat_tuple = normalise_seats(seats)
    except SeatingError as exc:
        raise InputError([f"seats: {exc}"]) from None
    moved = _moves(moves, seat_tuple, problems)
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)
                                or not 1 <= version <= MAX_SEATING_VERSION):
        problems.append(f"version: a seating's version is a whole number from 1 to "
                        f"{MAX_SEATING_VERSION}, not {version!r}")
    if problems or moved is None:
        raise InputError(problems or ["unreadable input"])
    return SeatsChange(seat_tuple, t, moved, version)


MAX_MOVES = 10
MAX_SEATING_VERSION = 2**53 - 1  # JSON's exact integers
_SEAT_NUMBER = range(SEAT_MIN, SEAT_MAX + 1)
# A table's id as the contract allows it (contract/schema.py NAME, a topic level: the core
# imports no contract; tests/test_contract.py holds the two the same).
TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
PLAYER_NAME = re.compile(r"^[\x20-\x7e]{1,16}$")  # as the 20-column display shows it


def _moves(items: Sequence[Mapping[str, Any]], seats: tuple[int, ...],
           problems: list[str]) -> tuple[SeatMove, ...] | None:
    """The players a seating change moves between tables: each leaves a seat no longer in
    ``seats`` or arrives in one that is."""
    if not isinstance(items, list | tuple) or len(items) > MAX_MOVES:
        problems.append(f"moves: must be a list of at most {MAX_MOVES} moves")
        return None
    moves: list[SeatMove] = []
    for index, item in enumerate(items):
        where = f"moves[{index}]"
        leaves = isinstance(item, dict) and "to_table" in item
        keys = ("seat", "to_table", "to_seat") if leaves else ("seat", "from_table",
                                                                 "from_seat")
        if not isinstance(item, dict) or set(item) - {"player"} != set(keys):
            problems.append(f"{where}: must be {{seat, to_table, to_seat}} or "
                            "{seat, from_table, from_seat}, and a player's name")
            continue
        seat, table, other = (item[k] for k in keys)
        player = item.get("player")
        if player is not None and not (isinstance(player, str)
                                       and PLAYER_NAME.match(player)):
            problems.append(f"{where}: player must be 1-16 printable ASCII characters (the "
                            "display's)")
            continue
        numbers_ok = all(not isinstance(n, bool) and isinstance(n, int) and n in _SEAT_NUMBER
                         for n in (seat, other))
        if not numbers_ok:
            problems.append(f"{where}: seats are numbers from 1 to 10")
        elif not isinstance(table, str) or not TABLE_ID.match(table):
            problems.append(f"{where}: {keys[1]} must be a table's name")
        elif leaves == (seat in seats):
            problems.append(f"{where}: seat {seat} " + ("is still in the seats: a player who "
                                                        "leaves gives up the seat" if leaves
                                                        else "is not in the seats: a player "
                                                        "who arrives takes a seat"))
        else:
            moves.append(SeatMove(seat, leaves, table, other, player))
    if len({m.seat for m in moves}) != len(moves):
        problems.append("moves: a seat moves twice")
    return tuple(moves) if len(moves) == len(items) and not problems else None


def _clock(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    # A line naming a structure and no action starts it.
    named = isinstance(obj.get("structure"), str)
    return _collected(problems, lambda: clock_command(
        obj.get("action", ClockAction.START if named else None), obj.get("structure"),
        elapsed=obj.get("elapsed"), running=obj.get("running", True), t=t))


def clock_command(action: str, structure: str | None = None, *,
                  elapsed: float | None = None, running: bool = True,
                  t: float | None = None) -> ClockCommand:
    """The table's blind clock told ``action`` (a ``clock`` line, the floor's ``cmd/clock``,
    the venue clock's reading as a ``sync``); ``InputError`` names every problem."""
    problems: list[str] = []
    structure = _str_or_none("structure", structure, problems)
    if action not in CLOCK_ACTIONS:
        problems.append(f"action: {action!r} is not one of {', '.join(CLOCK_ACTIONS)} "
                        "(a clock line names a structure to start, or an action)")
        raise InputError(problems)
    order = ClockAction(action)
    if order in (ClockAction.START, ClockAction.SYNC) and structure is None:
        problems.append(f"structure: {order} needs a structure name")
    if structure is not None and not STRUCTURE_NAME.match(structure):
        problems.append(f"structure: {structure[:80]!r} is not a structure name (letters, "
                        "digits, '-' and '_'; never a path)")
    if order == ClockAction.SYNC and (isinstance(elapsed, bool)
                                      or not isinstance(elapsed, int | float)
                                      or not 0 <= elapsed <= MAX_CLOCK_SECONDS):
        problems.append(f"elapsed: sync needs the seconds on the venue clock (0 to "
                        f"{MAX_CLOCK_SECONDS:.0f}), not {elapsed!r}")
        elapsed = None
    if not isinstance(running, bool):
        problems.append(f"running: must be true or false, not {running!r}")
        running = True
    if problems:
        raise InputError(problems)
    return ClockCommand(order, structure, t, float(elapsed) if elapsed is not None else None,
                        running)


def _shoe(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    state = obj.get("state")
    if state not in SHOE_STATES:
        problems.append(f"state: {state!r} is not one of {', '.join(SHOE_STATES)}")
        return None
    lost = cards = None
    if state != ShoeState.READS_LOST and ("lost" in obj or "cards" in obj):
        problems.append("lost, cards: only a 'reads_lost' shoe line counts lost reads")
    if state == ShoeState.READS_LOST:
        lost = obj.get("lost")
        if isinstance(lost, bool) or not isinstance(lost, int) or not 1 <= lost <= 65535:
            problems.append(f"lost: reads_lost needs the number of messages lost (1 to "
                            f"65535), not {lost!r}")
            lost = None
        cards = obj.get("cards")
        if cards is not None and (isinstance(cards, bool) or not isinstance(cards, int)
                                  or not 0 <= cards <= 65535):
            problems.append(f"cards: the card reads among them (0 to 65535) or null, not "
                            f"{cards!r}")
            cards = None
    part = obj.get("part")
    if part is not None and (state not in (ShoeState.FAULT, ShoeState.OK)
                             or part not in SHOE_PARTS):
        problems.append(f"part: {part!r} is not one of {', '.join(SHOE_PARTS)} (a fault's, or "
                        "its clearing's)")
        part = None
    return ShoeStatus(ShoeState(state), _opt_str(obj, "detail", problems), t, lost, cards,
                      part)


DEALER_ID_MAX = 64


def dealer_id_problem(dealer: str) -> str | None:
    """Why ``dealer`` is no dealer's id, or None: at most DEALER_ID_MAX characters, none a
    control or format character (an ESC drawn raw reset a terminal display; a bidi override
    turns a name round)."""
    if len(dealer) > DEALER_ID_MAX:
        return f"a dealer's id is at most {DEALER_ID_MAX} characters, not {len(dealer)}"
    for char in dealer:
        if unicodedata.category(char)[0] == "C":
            return f"a dealer's id has no control or format characters (U+{ord(char):04X})"
    return None


def _dealer(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    dealer = _opt_str(obj, "dealer", problems)
    if dealer is not None and (problem := dealer_id_problem(dealer)) is not None:
        problems.append(f"dealer: {problem}")
        dealer = None
    return DealerSignIn(dealer, t)


def _deck_check(obj: Mapping[str, Any], t: float | None, problems: list[str]) -> Input | None:
    action: Any = obj.get("action")
    return _collected(problems, lambda: deck_check_command(action, obj.get("deck"), t=t))


def deck_check_command(action: str, deck: str | None = None, *,
                       t: float | None = None) -> DeckCheckCommand:
    """A deck check told ``action`` (a ``deck_check`` line, the floor's ``cmd/deck-check``);
    ``InputError`` names every problem."""
    if action not in DECK_CHECK_ACTIONS:
        raise InputError([f"action: {action!r} is not start, finish or cancel"])
    order = DeckCheckAction(action)
    problems: list[str] = []
    deck = _str_or_none("deck", deck, problems)
    if order == DeckCheckAction.START and deck is None:
        problems.append("deck: a deck check names the deck being checked")
    if problems:
        raise InputError(problems)
    try:
        return DeckCheckCommand(order, parse_deck_id(deck) if deck is not None else None, t)
    except CardError as exc:
        raise InputError([str(exc)]) from None


def _hand_for_hand_line(obj: Mapping[str, Any], t: float | None,
                        problems: list[str]) -> Input | None:
    state: Any = obj.get("state")
    return _collected(problems, lambda: hand_for_hand(state, t=t))


def hand_for_hand(state: str, *, t: float | None = None) -> HandForHand:
    """The floor's hand-for-hand order (a ``hand_for_hand`` line, ``cmd/hand-for-hand``);
    ``InputError`` says what is wrong."""
    if state not in HAND_FOR_HAND:
        raise InputError([f"state: {state!r} is not one of {', '.join(HAND_FOR_HAND)}"])
    return HandForHand(HandForHandOrder(state), t)


_BUILDERS = {
    "setup": _setup,
    "deck_in": _deck_in,
    "deck_out": _deck_out,
    "card": _card,
    "button": _gesture,
    "seats": _seats,
    "clock": _clock,
    "shoe": _shoe,
    "dealer": _dealer,
    "deck_check": _deck_check,
    "hand_for_hand": _hand_for_hand_line,
}


def input_to_dict(item: Input) -> dict[str, Any]:
    """The replay line of an input (``parse_input`` reads it back): the daemon's journal."""
    t = item.t
    line: dict[str, Any]
    if isinstance(item, Setup):
        line = {"type": "setup"}
        for key in ("game", "button", "hand"):
            if getattr(item, key) is not None:
                line[key] = getattr(item, key)
        if item.seats is not None:
            line["seats"] = list(item.seats)
        if item.tags:
            line["tags"] = dict(item.tags)
    elif isinstance(item, DeckIn):
        line = {"type": "deck_in"}
        if item.deck is not None:
            line["deck"] = item.deck
    elif isinstance(item, DeckOut):
        line = {"type": "deck_out"}
    elif isinstance(item, CardRead):
        line = {"type": "card"}
        if item.card is not None:
            line["card"] = item.card
        if item.deck is not None:
            line["deck"] = item.deck
        if item.tag is not None:
            line["tag"] = item.tag
        if item.face != Face.DOWN:
            line["face"] = str(item.face)
        if item.boxed:
            line["boxed"] = True
        if item.card is None and item.tag is None:
            line["unreadable"] = True
    elif isinstance(item, Gesture):
        line = {"type": "button", "gesture": item.gesture}
    elif isinstance(item, SeatsChange):
        line = {"type": "seats", "seats": list(item.seats)}
        if item.moves:
            line["moves"] = [move.to_json() for move in item.moves]
    elif isinstance(item, ClockCommand):
        line = {"type": "clock", "action": str(item.action)}
        if item.structure is not None:
            line["structure"] = item.structure
        if item.action == "sync":
            line["elapsed"] = item.elapsed
            line["running"] = item.running
    elif isinstance(item, ShoeStatus):
        line = {"type": "shoe", "state": str(item.state)}
        if item.detail is not None:
            line["detail"] = item.detail
        if item.state == ShoeState.READS_LOST:
            line["lost"] = item.lost
            line["cards"] = item.cards
        if item.part is not None:
            line["part"] = item.part
    elif isinstance(item, DealerSignIn):
        line = {"type": "dealer", "dealer": item.dealer}
    elif isinstance(item, DeckCheckCommand):
        line = {"type": "deck_check", "action": str(item.action)}
        if item.deck is not None:
            line["deck"] = item.deck
    else:
        line = {"type": "hand_for_hand", "state": str(item.state)}
    if t is not None:
        line["t"] = t
    return line
