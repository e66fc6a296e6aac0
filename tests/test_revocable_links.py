"""The revocable links' one mechanism (hub/revocable_links.py), alone: whatever the floor or a
production makes and withdraws, in any order, the live key of each slot opens it, a key
withdrawn never opens anything again and is told withdrawn while it is remembered, a
withdrawal naming a stale generation changes nothing, and the settings a hub keeps give the
same links back after a restart. The three links' routes are tested against the hub itself
(tests/test_links_restart.py, tests/test_sessions_revoked.py, tests/test_players.py,
tests/test_broadcast.py)."""

from __future__ import annotations

import itertools
import secrets

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hub import revocable_links
from hub.revocable_links import GenerationLink, RevocableLinks, StaleGeneration, fresh_key


def _counting_source():
    """Keys that never repeat, told apart by eye."""
    numbers = itertools.count(1)
    return lambda: f"key-{next(numbers)}"


SLOTS = ("t1", "t2", "t3")
operations = st.lists(st.tuples(st.sampled_from(["make", "withdraw"]), st.sampled_from(SLOTS)),
                      max_size=40)


@given(operations, st.integers(min_value=1, max_value=6))
def test_any_sequence_opens_the_live_keys_only_and_says_withdrawn_of_the_last_ones(
        steps, remembered):
    source = _counting_source()
    links = RevocableLinks(remembered=remembered)
    live: dict[str, str] = {}
    withdrawn: list[str] = []  # every key withdrawn, the newest first
    for action, slot in steps:
        if action == "make":
            links = links.made(slot, source)
            if slot in live:
                withdrawn.insert(0, live[slot])
            live[slot] = links.live[slot]
        elif slot in live:
            links = links.without(slot)
            withdrawn.insert(0, live.pop(slot))
        else:
            with pytest.raises(KeyError):
                links.without(slot)
        assert dict(links.live) == live
        for slot_now, key in live.items():
            assert links.holder(key) == slot_now
            assert not links.was_withdrawn(key)
        for place, key in enumerate(withdrawn):
            assert links.holder(key) is None, "a withdrawn key opened a link again"
            assert links.was_withdrawn(key) == (place < remembered)
        assert len(links.withdrawn) <= remembered
        assert links.holder("never-made") is None and not links.was_withdrawn("never-made")
        kept = RevocableLinks(dict(links.live),
                              RevocableLinks.withdrawn_from(links.withdrawn_setting()),
                              remembered)
        assert kept == links, "the settings kept do not give the same links back"


@given(st.lists(st.integers(min_value=-1, max_value=8), max_size=30))
def test_a_generation_link_is_renewed_only_by_its_own_generation_and_comes_back_as_kept(asked):
    source = _counting_source()
    settings: dict[str, str] = {}
    link = GenerationLink.from_settings("tv", settings.get, 4, source)
    assert (link.key, link.generation) == ("key-1", 1)
    keys = [link.key]
    for generation in asked:
        try:
            renewed = link.renewed(generation, source)
        except StaleGeneration as stale:
            assert generation != link.generation
            assert (stale.asked, stale.current) == (generation, link.generation)
            assert stale.withdrawn_already == (generation < link.generation)
            continue
        assert generation == link.generation
        assert renewed.generation == generation + 1 and renewed.key not in keys
        link = renewed
        keys.append(link.key)
        settings = link.settings("tv")
        assert GenerationLink.from_settings("tv", settings.get, 4, source) == link
    assert link.opens(keys[-1]) and not link.was_withdrawn(keys[-1])
    for key in keys[:-1]:
        assert not link.opens(key)
    assert [link.was_withdrawn(key) for key in reversed(keys[:-1])] == \
        [place < 4 for place in range(len(keys) - 1)]


def test_the_settings_are_the_hub_s_own_names_and_a_key_before_generations_is_the_first():
    link = GenerationLink.from_settings("players", {"players_key": "old-key"}.get, 16)
    assert (link.key, link.generation) == ("old-key", 1)
    renewed = link.renewed(1)
    assert renewed.settings("players") == {
        "players_key": renewed.key, "players_generation": "2",
        "players_keys_withdrawn": "old-key"}
    assert len(renewed.key) == len(fresh_key()) == 24  # 18 random bytes, for a URL


def test_a_key_the_source_gave_before_is_drawn_again_and_a_stuck_source_is_refused():
    """A withdrawn link must never open again, even if a key source repeats itself."""
    given_keys = iter(["a", "a", "b", "", "a", "b", "c"])
    links = RevocableLinks().made("t1", lambda: next(given_keys))
    links = links.made("t1", lambda: next(given_keys))  # "a" is live: "b"
    assert dict(links.live) == {"t1": "b"} and links.withdrawn == ("a",)
    links = links.made("t2", lambda: next(given_keys))  # "", "a" and "b" known: "c"
    assert links.live["t2"] == "c" and links.holder("a") is None
    with pytest.raises(ValueError, match="8 keys in a row"):
        links.made("t3", lambda: "a")


def test_every_key_is_compared_in_constant_time_whichever_matches(monkeypatch):
    """No early exit: asking with the first slot's key compares it with every live key and,
    for a withdrawn one, with every withdrawn key, each by compare_digest."""
    compared: list[tuple[bytes, bytes]] = []
    real = secrets.compare_digest

    def compare_digest(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(revocable_links.secrets, "compare_digest", compare_digest)
    source = _counting_source()
    links = RevocableLinks(remembered=8)
    for slot in ("t1", "t2", "t3", "t1", "t2"):
        links = links.made(slot, source)
    first = links.live["t1"]
    assert links.holder(first) == "t1" and len(compared) == 3
    compared.clear()
    assert links.was_withdrawn(links.withdrawn[0]) and len(compared) == 2
    assert all(isinstance(a, bytes) for a, _ in compared)
    assert links.holder("naïve-kéy") is None  # not ASCII: compared as bytes, not refused
