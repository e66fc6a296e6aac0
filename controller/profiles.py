"""House-rule profiles: which ruling a house gives for each irregularity, as data.

A profile is data (a TOML file read by ``houses/loaders.py``: ``houses/profiles/<name>.toml``
for the built-in ones, any path for a house's own). Every rule names its value and cites its
source; a profile may inherit from another and override only what its house says differently.
Validation reports every bad key and value at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.balancing import MOVERS, SEAT_CHOICES
from controller.datafiles import ProblemsError


@dataclass(frozen=True)
class RuleSpec:
    """One configurable rule: the SPEC row it answers, what it decides, the values allowed."""

    row: str
    question: str
    values: tuple[str, ...]
    kind: str = "choice"  # "choice" (a string among values), "count" (a whole number within
    # ``bounds``) or "shot_clock" ({seconds, countdown})
    bounds: tuple[int, int] = (0, 0)


RULES: dict[str, RuleSpec] = {
    "exposed_first_card": RuleSpec(
        "1", "the first hole card of the deal is drawn face up", ("misdeal", "replace_exposed")
    ),
    "exposed_second_card": RuleSpec(
        "1", "the second hole card of the deal is drawn face up", ("misdeal", "replace_exposed")
    ),
    "exposed_later_card": RuleSpec(
        "2", "a single later hole card is drawn face up", ("replace_exposed", "misdeal")
    ),
    "exposed_two_cards": RuleSpec("3", "two or more hole cards exposed in one deal", ("misdeal",)),
    "boxed_card": RuleSpec("4", "a card found face up in the deck", ("scrap_and_replace",)),
    "boxed_two_cards": RuleSpec(
        "5", "a second boxed card in the initial deal", ("misdeal", "scrap_and_replace")
    ),
    "joker": RuleSpec("6", "a joker is drawn", ("scrap_and_replace",)),
    "extra_hole_card": RuleSpec(
        "7", "one extra card within the rhythm of the hole-card deal", ("use_as_burn", "misdeal")
    ),
    "extra_two_cards": RuleSpec("8", "two or more extra hole cards", ("misdeal",)),
    "missing_hole_card": RuleSpec(
        "9", "fewer hole cards than seats x cards when preflop betting closes", ("call_floor",)
    ),
    "premature_flop": RuleSpec("10", "a card drawn during preflop betting", ("reshuffle_redeal",)),
    "premature_turn": RuleSpec(
        "11", "a card drawn during flop betting", ("reshuffle_redeal", "set_aside_turn")
    ),
    "premature_river": RuleSpec("12", "a card drawn during turn betting", ("reshuffle_redeal",)),
    "too_many_flop_cards": RuleSpec(
        "13", "a fourth flop card within the flop's rhythm", ("redeal_flop", "scramble_flop")
    ),
    "missing_burn": RuleSpec(
        "14", "a street closed with its burn card missing", ("call_floor", "board_stands")
    ),
    "duplicate_card": RuleSpec("15", "the same card twice in one hand", ("void_hand",)),
    "foreign_card": RuleSpec("16", "a card of another deck", ("void_hand",)),
    "unknown_tag": RuleSpec("17", "a tag that maps to no card", ("call_floor",)),
    "shoe_fault": RuleSpec("18", "shoe link lost or reader fault mid-hand", ("call_floor",)),
    "button_movement": RuleSpec(
        "seating",
        "where the button and blinds go when seats empty between hands",
        ("dead_button", "dead_button_button_stays_on_sb_bust", "moving_button"),
    ),
    "level_change_timing": RuleSpec(
        "clock",
        "the moment a hand begins, fixing the blind level it is played at",
        ("deck_inserted", "first_card"),
    ),
    "game_declaration": RuleSpec(
        "dealing",
        "whether the dealer declares the game before each deal (dealer's choice)",
        ("fixed", "dealer_declares"),
    ),
    "new_player": RuleSpec(
        "seating",
        "whether a player who sits down between hands is dealt in at once, or waits for the "
        "button to pass where the house forbids coming in",
        ("deal_in_immediately", "wait_between_sb_and_button",
         "wait_between_button_and_big_blind", "wait_on_button_or_small_blind"),
    ),
    "floor_call_clock": RuleSpec(
        "clock",
        "whether the blind clock runs on while the floor attends a dispute at a table",
        ("runs", "pauses"),
    ),
    "balance_when": RuleSpec(
        "balancing",
        "how far apart two tables' player counts may be before a player moves (more than this)",
        (), kind="count", bounds=(1, 8),
    ),
    "balance_mover": RuleSpec(
        "balancing",
        "who moves from the larger table",
        MOVERS,
    ),
    "balance_seat": RuleSpec(
        "balancing",
        "which open seat a moved player takes at the smaller table",
        SEAT_CHOICES,
    ),
    "table_size": RuleSpec(
        "balancing",
        "the most players a table seats: seats 1 to this, and no move, break or seating "
        "goes past it",
        (), kind="count", bounds=(2, 10),
    ),
    "break_table_at": RuleSpec(
        "balancing",
        "a table breaks when the players left fit at one table fewer with at most this many "
        "at each; its players draw for the open seats",
        (), kind="count", bounds=(2, 10),
    ),
    "shot_clock": RuleSpec(
        "clock",
        "time a player has once the clock is called, then the final countdown",
        (),
        kind="shot_clock",
    ),
}

# The reason a ruling carries when the SPEC names one (misdeals say why; the floor is told why).
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

    def choice(self, key: str) -> str:
        value = self.rules[key].value
        assert isinstance(value, str)
        return value

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
    spec = RULES[key]
    if "value" not in entry:
        problems.append(f"{where}.value: missing")
    elif spec.kind == "shot_clock":
        value = entry["value"]
        if not isinstance(value, dict) or set(value) != {"seconds", "countdown"}:
            problems.append(f"{where}.value: must be {{seconds = N, countdown = N}}")
        else:
            for part in ("seconds", "countdown"):
                number = value[part]
                if isinstance(number, bool) or not isinstance(number, int | float) or number < 0:
                    problems.append(f"{where}.value.{part}: must be a number of seconds >= 0, "
                                    f"not {number!r}")
    elif spec.kind == "count":
        value, (low, high) = entry["value"], spec.bounds
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            problems.append(f"{where}.value: must be a whole number from {low} to {high}, "
                            f"not {value!r}")
    elif entry["value"] not in spec.values:
        problems.append(f"{where}.value: {entry['value']!r} is not one of "
                        f"{', '.join(spec.values)}")
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
            and merged["balance_seat"].value == "same_position"
            and merged["balance_mover"].value != "big_blind_next"):
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

