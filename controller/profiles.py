"""House-rule profiles: which ruling a house gives for each irregularity, as data.

A profile is data (a TOML file read by ``houses/loaders.py``: ``houses/profiles/<name>.toml``
for the built-in ones, any path for a house's own). Every rule names its value and cites its
source; a profile may inherit from another and override only what its house says differently.
Validation reports every bad key and value at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar, overload

from controller.balancing import BalanceMover, BalanceSeat
from controller.datafiles import ProblemsError
from controller.events import RulingAction
from controller.seating import ButtonMovement, NewPlayer

Option = TypeVar("Option", bound=StrEnum)


class LevelChangeTiming(StrEnum):
    """The moment a hand begins, fixing the blind level it is played at."""

    DECK_INSERTED = "deck_inserted"
    FIRST_CARD = "first_card"


class GameDeclaration(StrEnum):
    FIXED = "fixed"
    DEALER_DECLARES = "dealer_declares"  # dealer's choice


class FloorCallClock(StrEnum):
    RUNS = "runs"
    PAUSES = "pauses"


@dataclass(frozen=True)
class RuleSpec:
    """One configurable rule: the SPEC row it answers and what it decides. A rule is one of
    three kinds: a choice among options (``ChoiceRule``), a whole number within bounds
    (``CountRule``) or the shot clock's two durations (``ShotClockRule``)."""

    key: str
    row: str
    question: str

    def problems(self, value: Any, where: str) -> list[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class ChoiceRule(RuleSpec, Generic[Option]):
    """A rule whose value is one of ``options``, a closed vocabulary: for a rule on an
    irregularity, the ruling actions the house may choose (the value is the ruling's action)."""

    options: tuple[Option, ...]
    by_value: dict[str, Option] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_value", {str(option): option for option in self.options})

    def problems(self, value: Any, where: str) -> list[str]:
        if isinstance(value, str) and value in self.by_value:
            return []
        return [f"{where}: {value!r} is not one of {', '.join(self.options)}"]


@dataclass(frozen=True)
class CountRule(RuleSpec):
    bounds: tuple[int, int]

    def problems(self, value: Any, where: str) -> list[str]:
        low, high = self.bounds
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return [f"{where}: must be a whole number from {low} to {high}, not {value!r}"]
        return []


@dataclass(frozen=True)
class ShotClockRule(RuleSpec):
    """``{seconds, countdown}``: the time a player has once the clock is called, then the
    final countdown."""

    def problems(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, dict) or set(value) != {"seconds", "countdown"}:
            return [f"{where}: must be {{seconds = N, countdown = N}}"]
        problems = []
        for part in ("seconds", "countdown"):
            number = value[part]
            if isinstance(number, bool) or not isinstance(number, int | float) or number < 0:
                problems.append(f"{where}.{part}: must be a number of seconds >= 0, "
                                f"not {number!r}")
        return problems


EXPOSED_FIRST_CARD = ChoiceRule(
    "exposed_first_card", "1", "the first hole card of the deal is drawn face up",
    (RulingAction.MISDEAL, RulingAction.REPLACE_EXPOSED))
EXPOSED_SECOND_CARD = ChoiceRule(
    "exposed_second_card", "1", "the second hole card of the deal is drawn face up",
    (RulingAction.MISDEAL, RulingAction.REPLACE_EXPOSED))
EXPOSED_LATER_CARD = ChoiceRule(
    "exposed_later_card", "2", "a single later hole card is drawn face up",
    (RulingAction.REPLACE_EXPOSED, RulingAction.MISDEAL))
EXPOSED_TWO_CARDS = ChoiceRule(
    "exposed_two_cards", "3", "two or more hole cards exposed in one deal", (RulingAction.MISDEAL,))
BOXED_CARD = ChoiceRule(
    "boxed_card", "4", "a card found face up in the deck", (RulingAction.SCRAP_AND_REPLACE,))
BOXED_TWO_CARDS = ChoiceRule(
    "boxed_two_cards", "5", "a second boxed card in the initial deal",
    (RulingAction.MISDEAL, RulingAction.SCRAP_AND_REPLACE))
JOKER = ChoiceRule("joker", "6", "a joker is drawn", (RulingAction.SCRAP_AND_REPLACE,))
EXTRA_HOLE_CARD = ChoiceRule(
    "extra_hole_card", "7", "one extra card within the rhythm of the hole-card deal",
    (RulingAction.USE_AS_BURN, RulingAction.MISDEAL))
EXTRA_TWO_CARDS = ChoiceRule(
    "extra_two_cards", "8", "two or more extra hole cards", (RulingAction.MISDEAL,))
MISSING_HOLE_CARD = ChoiceRule(
    "missing_hole_card", "9",
    "fewer hole cards than seats x cards when preflop betting closes", (RulingAction.CALL_FLOOR,))
PREMATURE_FLOP = ChoiceRule(
    "premature_flop", "10", "a card drawn during preflop betting", (RulingAction.RESHUFFLE_REDEAL,))
PREMATURE_TURN = ChoiceRule(
    "premature_turn", "11", "a card drawn during flop betting",
    (RulingAction.RESHUFFLE_REDEAL, RulingAction.SET_ASIDE_TURN))
PREMATURE_RIVER = ChoiceRule(
    "premature_river", "12", "a card drawn during turn betting", (RulingAction.RESHUFFLE_REDEAL,))
TOO_MANY_FLOP_CARDS = ChoiceRule(
    "too_many_flop_cards", "13", "a fourth flop card within the flop's rhythm",
    (RulingAction.REDEAL_FLOP, RulingAction.SCRAMBLE_FLOP))
MISSING_BURN = ChoiceRule(
    "missing_burn", "14", "a street closed with its burn card missing",
    (RulingAction.CALL_FLOOR, RulingAction.BOARD_STANDS))
DUPLICATE_CARD = ChoiceRule(
    "duplicate_card", "15", "the same card twice in one hand", (RulingAction.VOID_HAND,))
FOREIGN_CARD = ChoiceRule("foreign_card", "16", "a card of another deck", (RulingAction.VOID_HAND,))
UNKNOWN_TAG = ChoiceRule(
    "unknown_tag", "17", "a tag that maps to no card", (RulingAction.CALL_FLOOR,))
SHOE_FAULT = ChoiceRule(
    "shoe_fault", "18", "shoe link lost or reader fault mid-hand", (RulingAction.CALL_FLOOR,))
BUTTON_MOVEMENT = ChoiceRule(
    "button_movement", "seating",
    "where the button and blinds go when seats empty between hands", tuple(ButtonMovement))
LEVEL_CHANGE_TIMING = ChoiceRule(
    "level_change_timing", "clock",
    "the moment a hand begins, fixing the blind level it is played at",
    tuple(LevelChangeTiming))
GAME_DECLARATION = ChoiceRule(
    "game_declaration", "dealing",
    "whether the dealer declares the game before each deal (dealer's choice)",
    tuple(GameDeclaration))
NEW_PLAYER = ChoiceRule(
    "new_player", "seating",
    "whether a player who sits down between hands is dealt in at once, or waits for the "
    "button to pass where the house forbids coming in", tuple(NewPlayer))
FLOOR_CALL_CLOCK = ChoiceRule(
    "floor_call_clock", "clock",
    "whether the blind clock runs on while the floor attends a dispute at a table",
    tuple(FloorCallClock))
BALANCE_WHEN = CountRule(
    "balance_when", "balancing",
    "how far apart two tables' player counts may be before a player moves (more than this)",
    (1, 8))
BALANCE_MOVER = ChoiceRule(
    "balance_mover", "balancing", "who moves from the larger table", tuple(BalanceMover))
BALANCE_SEAT = ChoiceRule(
    "balance_seat", "balancing", "which open seat a moved player takes at the smaller table",
    tuple(BalanceSeat))
TABLE_SIZE = CountRule(
    "table_size", "balancing",
    "the most players a table seats: seats 1 to this, and no move, break or seating goes "
    "past it", (2, 10))
BREAK_TABLE_AT = CountRule(
    "break_table_at", "balancing",
    "a table breaks when the players left fit at one table fewer with at most this many at "
    "each; its players draw for the open seats", (2, 10))
SHOT_CLOCK = ShotClockRule(
    "shot_clock", "clock", "time a player has once the clock is called, then the final countdown")

RULES: dict[str, RuleSpec] = {rule.key: rule for rule in (
    EXPOSED_FIRST_CARD, EXPOSED_SECOND_CARD, EXPOSED_LATER_CARD, EXPOSED_TWO_CARDS, BOXED_CARD,
    BOXED_TWO_CARDS, JOKER, EXTRA_HOLE_CARD, EXTRA_TWO_CARDS, MISSING_HOLE_CARD, PREMATURE_FLOP,
    PREMATURE_TURN, PREMATURE_RIVER, TOO_MANY_FLOP_CARDS, MISSING_BURN, DUPLICATE_CARD,
    FOREIGN_CARD, UNKNOWN_TAG, SHOE_FAULT, BUTTON_MOVEMENT, LEVEL_CHANGE_TIMING, GAME_DECLARATION,
    NEW_PLAYER, FLOOR_CALL_CLOCK, BALANCE_WHEN, BALANCE_MOVER, BALANCE_SEAT, TABLE_SIZE,
    BREAK_TABLE_AT, SHOT_CLOCK)}

RULE_KEYS = tuple(RULES)
PROFILE_KEYS = ("name", "title", "inherits", "base_note", "rules")
RULE_ENTRY_KEYS = ("value", "source", "quote", "note")


class ProfileError(ProblemsError):
    """A profile file that cannot be used; ``problems`` lists every one found, with its key."""

    subject = "profile"


@dataclass(frozen=True)
class Rule:
    key: str
    value: Any
    source: str
    quote: str = ""
    note: str = ""
    defined_in: str = ""


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    inherits: str | None
    rules: Mapping[str, Rule]
    base_note: str = ""
    chain: tuple[str, ...] = field(default=())

    def value(self, key: str) -> Any:
        return self.rules[key].value

    @overload
    def choice(self, rule: ChoiceRule[Option]) -> Option: ...

    @overload
    def choice(self, rule: str) -> Any: ...

    def choice(self, rule: ChoiceRule[Any] | str) -> Any:
        """The house's option for a choice rule, as its vocabulary's member (asked by the
        rule's key, the member too, but untyped)."""
        if isinstance(rule, str):
            spec = RULES[rule]
            assert isinstance(spec, ChoiceRule)
            rule = spec
        return rule.by_value[self.rules[rule.key].value]

    @property
    def shot_clock(self) -> tuple[float, float]:
        value = self.rules["shot_clock"].value
        return float(value["seconds"]), float(value["countdown"])


def _validate_rule(key: str, entry: Any, where: str) -> list[str]:
    problems: list[str] = []
    if not isinstance(entry, dict):
        return [f"{where}: must be a table with 'value' and 'source'"]
    for extra in sorted(set(entry) - set(RULE_ENTRY_KEYS)):
        problems.append(f"{where}.{extra}: unknown key (allowed: {', '.join(RULE_ENTRY_KEYS)})")
    source = entry.get("source")
    if not isinstance(source, str) or not source.strip():
        problems.append(f"{where}.source: every rule must cite its source (seed file and rule, "
                        "TDA rule number or Robert's Rules section)")
    for text_key in ("quote", "note"):
        if text_key in entry and not isinstance(entry[text_key], str):
            problems.append(f"{where}.{text_key}: must be a string")
    if "value" not in entry:
        problems.append(f"{where}.value: missing")
    else:
        problems.extend(RULES[key].problems(entry["value"], f"{where}.value"))
    return problems


def profile_from_data(
    data: Mapping[str, Any],
    origin: str,
    *,
    resolve: Callable[..., Profile],
    _seen: tuple[str, ...] = (),
) -> Profile:
    """Validate profile data and merge it over its base. ``resolve(name, _seen=...)`` loads a
    base by name: the shell's loader (``houses/loaders.py``); the core reads no file."""
    problems: list[str] = []
    for extra in sorted(set(data) - set(PROFILE_KEYS)):
        problems.append(f"{extra}: unknown key (allowed: {', '.join(PROFILE_KEYS)})")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        problems.append("name: missing or not a string")
        name = origin
    title = data.get("title", name)
    if not isinstance(title, str):
        problems.append("title: must be a string")
        title = str(name)
    base_note = data.get("base_note", "")
    if not isinstance(base_note, str):
        problems.append("base_note: must be a string")
        base_note = ""
    inherits = data.get("inherits")
    base: Profile | None = None
    if inherits is not None:
        if not isinstance(inherits, str):
            problems.append("inherits: must be the name of another profile")
        elif inherits in _seen or inherits in (name, origin):
            chain = " -> ".join((*_seen, origin, inherits))
            problems.append(f"inherits: {inherits!r} makes a cycle ({chain})")
        else:
            try:
                base = resolve(inherits, _seen=(*_seen, origin, str(name)))
            except ProfileError as exc:
                if exc.origin == inherits and exc.problems and exc.problems[0].startswith("no "):
                    problems.append(f"inherits: {exc.problems[0]}")
                else:
                    problems.extend(f"inherits {inherits}: {p}" for p in exc.problems)
    rules_data = data.get("rules", {})
    merged: dict[str, Rule] = dict(base.rules) if base else {}
    if not isinstance(rules_data, dict):
        problems.append("rules: must be a table of rules")
        rules_data = {}
    for key, entry in rules_data.items():
        where = f"rules.{key}"
        if key not in RULES:
            problems.append(f"{where}: unknown rule (known: {', '.join(RULE_KEYS)})")
            continue
        found = _validate_rule(key, entry, where)
        problems.extend(found)
        if not found:
            merged[key] = Rule(
                key=key,
                value=entry["value"],
                source=entry["source"].strip(),
                quote=entry.get("quote", "").strip(),
                note=entry.get("note", "").strip(),
                defined_in=str(name),
            )
    if ("balance_seat" in merged and "balance_mover" in merged
            and merged["balance_seat"].value == BalanceSeat.SAME_POSITION
            and merged["balance_mover"].value != BalanceMover.BIG_BLIND_NEXT):
        # The seat follows the mover's place; a mover chosen by the seat's place cannot.
        problems.append("rules.balance_seat: 'same_position' follows the mover's place, so "
                        "balance_mover must be 'big_blind_next' (not "
                        f"{merged['balance_mover'].value!r})")
    if ("table_size" in merged and "break_table_at" in merged
            and merged["break_table_at"].value > merged["table_size"].value):
        problems.append(f"rules.break_table_at: {merged['break_table_at'].value} players a "
                        f"table, more than the house's table_size of "
                        f"{merged['table_size'].value}")
    if not problems:
        missing = [k for k in RULE_KEYS if k not in merged]
        if missing:
            problems.extend(
                f"rules.{k}: missing (define it, or inherit from a profile that does)"
                for k in missing
            )
    if problems:
        raise ProfileError(origin, problems)
    lineage = (str(name), *(base.chain if base else ()))
    return Profile(str(name), title, inherits, merged, base_note, lineage)

