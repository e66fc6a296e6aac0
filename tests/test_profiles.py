"""House-rule profiles: complete, sourced, true to the seed rule books and to the SPEC table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.events import RulingAction
from controller.profiles import (
    FLOOR_CALL_CLOCK,
    RULES,
    ChoiceRule,
    FloorCallClock,
    ProfileError,
    profile_from_data,
)
from houses.loaders import builtin_names, load_profile

# The venues' rule books, kept in the repository (docs/seeds) so that the quote check always
# runs; the workspace's originals (../shared/seeds) are compared with them where present.
SEEDS = Path(__file__).resolve().parents[1] / "docs" / "seeds"
SHARED_SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
SEED_FILES = {
    "000": "000_084202298f4c0127.txt", "001": "001_b5fef810fc32ad7f.txt",
    "002": "002_e900474a20fbd07b.txt", "003": "003_cf901d31aca2d261.txt",
    "004": "004_33a0b8fa9b3ede2f.txt",
}

ALL = ("tda-2024", "roberts-rules", "corner-pocket", "scpc-2010", "lppl", "mikes-poker-tables",
       "dealers-choice")


def _normal(text: str) -> str:
    text = (text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
            .replace("\u201d", '"').replace("\u2013", "-").replace("\u2014", "-"))
    return re.sub(r"\s+", " ", text).strip()


def test_the_seven_profiles_are_built_in():
    assert set(builtin_names()) == set(ALL)


@pytest.mark.parametrize("name", ALL)
def test_every_rule_is_defined_and_cites_a_source(name):
    profile = load_profile(name)
    assert set(profile.rules) == set(RULES)
    for rule in profile.rules.values():
        assert rule.source.strip()


@pytest.mark.parametrize("name", ALL)
def test_seed_quotes_are_the_seeds_own_words(name):
    """Every quote attributed to a seed appears in that seed file (elisions marked [...])."""
    profile = load_profile(name)
    checked = 0
    for rule in profile.rules.values():
        match = re.match(r"seed (\d{3})", rule.source)
        if not match or not rule.quote or rule.defined_in != name:
            continue
        seed = _normal((SEEDS / SEED_FILES[match.group(1)]).read_text(encoding="utf-8"))
        for part in rule.quote.split("[...]"):
            part = _normal(part).strip(" .\"'")
            assert part in seed, f"{name}.{rule.key}: {part!r} not in seed {match.group(1)}"
        checked += 1
    if name not in ("tda-2024", "roberts-rules"):
        assert checked > 0


def test_the_kept_rule_books_are_the_venues_own():
    assert sorted(p.name for p in SEEDS.iterdir()) == sorted(SEED_FILES.values())
    if not SHARED_SEEDS.is_dir():
        return  # a clone on its own: docs/seeds is the only copy there is
    for name in SEED_FILES.values():
        assert (SEEDS / name).read_bytes() == (SHARED_SEEDS / name).read_bytes(), name


def test_bases():
    assert load_profile("mikes-poker-tables").inherits == "roberts-rules"
    assert load_profile("dealers-choice").inherits == "roberts-rules"
    for name in ("corner-pocket", "scpc-2010", "lppl"):
        assert load_profile(name).inherits in ("tda-2024", "roberts-rules")


# The SPEC's irregularity table, where the rulings differ by house.
SPEC = {
    "exposed_first_card": {"lppl": "replace_exposed", "*": "misdeal"},
    "exposed_second_card": {"lppl": "replace_exposed", "corner-pocket": "replace_exposed",
                            "*": "misdeal"},
    "boxed_two_cards": {"scpc-2010": "scrap_and_replace", "corner-pocket": "scrap_and_replace",
                        "*": "misdeal"},
    "extra_hole_card": {"roberts-rules": "use_as_burn", "mikes-poker-tables": "use_as_burn",
                        "dealers-choice": "use_as_burn", "tda-2024": "misdeal",
                        "corner-pocket": "misdeal"},
    "premature_turn": {"tda-2024": "reshuffle_redeal", "scpc-2010": "reshuffle_redeal",
                       "lppl": "reshuffle_redeal", "*": "set_aside_turn"},
    "too_many_flop_cards": {"roberts-rules": "redeal_flop", "corner-pocket": "redeal_flop",
                            "mikes-poker-tables": "redeal_flop", "tda-2024": "scramble_flop"},
    "missing_burn": {"corner-pocket": "board_stands", "*": "call_floor"},
    "premature_flop": {"*": "reshuffle_redeal"},
    "premature_river": {"*": "reshuffle_redeal"},
    "level_change_timing": {"corner-pocket": "first_card", "*": "deck_inserted"},
}


@pytest.mark.parametrize("key", sorted(SPEC))
def test_profiles_match_the_spec_table(key):
    for name in ALL:
        want = SPEC[key].get(name, SPEC[key].get("*"))
        if want is not None:
            assert load_profile(name).choice(key) == want, (name, key)


def test_each_choice_is_a_member_of_its_rules_closed_vocabulary():
    rules = [rule for rule in RULES.values() if isinstance(rule, ChoiceRule)]
    assert len(rules) == 26
    for name in ALL:
        profile = load_profile(name)
        for rule in rules:
            value = profile.choice(rule)
            assert value in rule.options and type(value) is type(rule.options[0]), (name, rule)
    # a rule on an irregularity chooses among ruling actions: the choice is the ruling's action
    assert {type(rule.options[0]) for rule in rules if rule.row.isdigit()} == {RulingAction}
    assert load_profile("mikes-poker-tables").choice(FLOOR_CALL_CLOCK) is FloorCallClock.PAUSES


def test_a_choice_outside_its_options_is_refused_with_them_listed():
    data = {"name": "x", "inherits": "tda-2024",
            "rules": {"floor_call_clock": {"value": "stops", "source": "s"},
                      "premature_flop": {"value": "set_aside_turn", "source": "s"},
                      "balance_seat": {"value": "Random", "source": "s"}}}
    with pytest.raises(ProfileError) as info:
        profile_from_data(data, "x.toml", resolve=load_profile)
    assert info.value.problems == [
        "rules.floor_call_clock.value: 'stops' is not one of runs, pauses",
        "rules.premature_flop.value: 'set_aside_turn' is not one of reshuffle_redeal",
        "rules.balance_seat.value: 'Random' is not one of worst_position, same_position, "
        "left_of_big_blind, random"]


def test_shot_clocks():
    assert load_profile("tda-2024").shot_clock == (25.0, 5.0)
    assert load_profile("corner-pocket").shot_clock == (60.0, 10.0)


def test_every_problem_is_reported_at_once():
    data = {"name": "x", "inherits": "roberts-rules", "wat": 1,
            "rules": {"joker": {"value": "keep_it", "source": ""},
                      "shot_clock": {"value": {"seconds": -1, "countdown": "ten"},
                                     "source": "s"},
                      "nope": {"value": "a", "source": "b"},
                      "missing_burn": {"value": "call_floor", "source": "s", "extra": 1}}}
    with pytest.raises(ProfileError) as info:
        profile_from_data(data, "x.toml", resolve=load_profile)
    problems = "\n".join(info.value.problems)
    for needle in ("wat", "rules.joker.value", "rules.joker.source", "shot_clock.value.seconds",
                   "shot_clock.value.countdown", "rules.nope", "missing_burn.extra"):
        assert needle in problems
    assert len(info.value.problems) == 7


def test_a_complete_profile_needs_every_rule():
    with pytest.raises(ProfileError) as info:
        profile_from_data({"name": "bare", "rules": {}}, "bare.toml", resolve=load_profile)
    assert len(info.value.problems) == len(RULES)


def test_inheritance_cycle_and_unknown_base(tmp_path):
    a = tmp_path / "a.toml"
    b = tmp_path / "b.toml"
    a.write_text(f'name = "a"\ninherits = "{b}"\n')
    b.write_text(f'name = "b"\ninherits = "{a}"\n')
    with pytest.raises(ProfileError, match="cycle"):
        load_profile(str(a))
    with pytest.raises(ProfileError, match="no profile named 'nobody'"):
        profile_from_data({"name": "c", "inherits": "nobody"}, "c.toml", resolve=load_profile)
