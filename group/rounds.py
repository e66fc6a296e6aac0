"""``Rounds``: entries waiting key by key (a key: a venue), taken one key's at a time in turn.

Both the central recorder's intake (``group.intake``) and each of its writers' pending entries
(``group.turns``) serve the group's venues this way, so that one venue with much waiting
delays another's next entry by one entry of its own, not by all it has: a key with something
waiting has its turn, gives one entry, and goes behind every other key with something waiting.
Each key's entries come out in the order they went in, each once.

Pure: no lock, no clock. What bounds a key's queue and when a take stops are its users'.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)
Entry = TypeVar("Entry")


def _every_key(key: Hashable) -> bool:
    return True


class Rounds(Generic[Key, Entry]):
    def __init__(self) -> None:
        # Only keys with something waiting (memory: a key gone quiet leaves nothing behind).
        self._waiting: dict[Key, deque[Entry]] = {}
        self._turns: deque[Key] = deque()  # keys with something waiting, in turn

    def add(self, key: Key, entry: Entry) -> None:
        """``entry`` after ``key``'s others; a key that had nothing waiting joins the back of
        the turns."""
        waiting = self._waiting.get(key)
        if waiting is None:
            waiting = self._waiting[key] = deque()
            self._turns.append(key)
        waiting.append(entry)

    def take(self, admit: Callable[[Key], bool] = _every_key) -> tuple[Key, Entry] | None:
        """The next entry of the first key in turn that ``admit`` lets in, with its key; that
        key goes behind the others if it has more. A key passed over keeps what waits and
        goes behind too (its turn comes again once it is let in). None if nothing waits or
        no key waiting is let in."""
        passed_over = 0  # all the keys waiting passed over: none is let in
        while self._turns and passed_over < len(self._turns):
            key = self._turns.popleft()
            if not admit(key):
                self._turns.append(key)
                passed_over += 1
                continue
            waiting = self._waiting[key]
            entry = waiting.popleft()
            if waiting:
                self._turns.append(key)
            else:
                del self._waiting[key]
            return key, entry
        return None

    def waiting(self, key: Key) -> int:
        """How many of ``key``'s entries wait."""
        waiting = self._waiting.get(key)
        return 0 if waiting is None else len(waiting)

    def __len__(self) -> int:
        return sum(len(waiting) for waiting in self._waiting.values())
