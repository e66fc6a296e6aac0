"""Revocable links: the keys that open a page with no login (the room clock's TV link, the
players' screen link, a table's OBS overlay link), each one withdrawable, and a withdrawn
key remembered so that a page still showing it is told "withdrawn" rather than "not a link".

One mechanism for the three, pure: no clock, no database. The floor's use cases keep what
these values say in the hub's settings (``settings``/``from_settings``), the database
first and the memory after, and choose the words of each refusal. A value never changes:
making or withdrawing a link gives a new one, which the caller swaps in once it is kept, so a
write that fails leaves the links as the database holds them.

Keys are secrets: new ones come from a key source (``fresh_key``, the operating system's
randomness, unless a test gives another), and a key asked with is compared with every key
known, in constant time each, with no early exit: how long the answer takes says nothing of
which key, if any, it matched."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import ClassVar

KEY_BYTES = 18  # 24 characters in a URL: guessing one is out of reach
KeySource = Callable[[], str]
# A source giving only keys known already is broken: drawing again this often says so.
DRAWS = 8


def fresh_key() -> str:
    """A new key from the operating system's randomness, fit for a URL's fragment."""
    return secrets.token_urlsafe(KEY_BYTES)


def same_secret(asked: str, known: str) -> bool:
    """Whether ``asked`` is ``known``, in a time that depends on neither's characters (the
    bytes: a header may carry characters compare_digest refuses as text)."""
    return secrets.compare_digest(asked.encode(), known.encode())


class StaleGeneration(Exception):
    """A withdrawal naming a generation that is not the current one: withdrawn already (a
    second tablet, another tab) or never made. Withdrawing the current link instead would
    withdraw the one just handed out in its place."""

    def __init__(self, asked: int, current: int) -> None:
        super().__init__(f"generation {asked} is not the current one ({current})")
        self.asked, self.current = asked, current

    @property
    def withdrawn_already(self) -> bool:
        return self.asked < self.current


@dataclass(frozen=True)
class RevocableLinks:
    """Links by slot (a table's overlay; the one TV link), a live key each, and the keys
    withdrawn, the newest first, the last ``remembered`` of them (older ones are refused as
    keys never made)."""

    live: Mapping[str, str] = field(default_factory=dict)  # slot: its key
    withdrawn: tuple[str, ...] = ()  # the newest first
    remembered: int = 16

    def holder(self, key: str) -> str | None:
        """The slot whose live key is ``key``; None when none is (withdrawn, or never
        made). Every live key is compared, whichever matches."""
        found = None
        for slot, live in self.live.items():
            if same_secret(key, live):
                found = slot
        return found

    def was_withdrawn(self, key: str) -> bool:
        """Whether ``key`` is one of the withdrawn keys remembered (every one compared)."""
        return sum(same_secret(key, old) for old in self.withdrawn) > 0

    def made(self, slot: str, source: KeySource = fresh_key) -> RevocableLinks:
        """A new key for ``slot``; its key before, if any, withdrawn (one link a slot).

        A key already known (live or remembered as withdrawn) is drawn again: a withdrawn
        link must never open anything again, whatever the source gives."""
        known = {*self.live.values(), *self.withdrawn}
        for _ in range(DRAWS):
            key = source()
            if key and key not in known:
                break
        else:
            raise ValueError(f"the key source gave {DRAWS} keys in a row that were empty or "
                             "known already")
        old = self.live.get(slot)
        return replace(self, live={**self.live, slot: key},
                       withdrawn=self._withdrawing(old))

    def without(self, slot: str) -> RevocableLinks:
        """``slot``'s link withdrawn, none made in its place; KeyError when it has none."""
        old = self.live[slot]
        return replace(self, live={s: k for s, k in self.live.items() if s != slot},
                       withdrawn=self._withdrawing(old))

    def _withdrawing(self, key: str | None) -> tuple[str, ...]:
        return ((key, *self.withdrawn) if key else self.withdrawn)[:self.remembered]

    @staticmethod
    def withdrawn_from(kept: str | None) -> tuple[str, ...]:
        """The withdrawn keys as a setting keeps them: space-separated, the newest first."""
        return tuple((kept or "").split())

    def withdrawn_setting(self) -> str:
        return " ".join(self.withdrawn)


@dataclass(frozen=True)
class GenerationLink:
    """One link at a time (the TV's, the players' screen's), numbered: 1 for the first key,
    one more at each withdrawal, which names the generation it withdraws (a dashboard shows
    the highest it has seen) and makes the next."""

    links: RevocableLinks  # one slot, ONE
    generation: int

    ONE: ClassVar[str] = "link"

    @property
    def key(self) -> str:
        return self.links.live[self.ONE]

    def opens(self, key: str) -> bool:
        return self.links.holder(key) is not None

    def was_withdrawn(self, key: str) -> bool:
        return self.links.was_withdrawn(key)

    def renewed(self, generation: int, source: KeySource = fresh_key) -> GenerationLink:
        """The link of ``generation`` withdrawn and the next made; StaleGeneration when
        ``generation`` is not the current one (the link is then left as it is)."""
        if generation != self.generation:
            raise StaleGeneration(generation, self.generation)
        return GenerationLink(self.links.made(self.ONE, source), self.generation + 1)

    @classmethod
    def from_settings(cls, name: str, setting: Callable[[str], str | None], remembered: int,
                      source: KeySource = fresh_key) -> GenerationLink:
        """The link kept in the settings ``NAME_key``, ``NAME_generation`` and
        ``NAME_keys_withdrawn`` (``setting`` reads one); a first key made when none is kept,
        and a key kept before links had generations is the first."""
        key = setting(f"{name}_key") or source()
        return cls(RevocableLinks({cls.ONE: key},
                                  RevocableLinks.withdrawn_from(
                                      setting(f"{name}_keys_withdrawn")), remembered),
                   int(setting(f"{name}_generation") or 1))

    def settings(self, name: str) -> dict[str, str]:
        """The settings ``from_settings`` reads back."""
        return {f"{name}_key": self.key, f"{name}_generation": str(self.generation),
                f"{name}_keys_withdrawn": self.links.withdrawn_setting()}
