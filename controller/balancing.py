"""Balancing and breaking tables by the house's rule. Pure.

The hub gives every table's seats with the current (or last) hand's button and blinds, the
house's five rules (``RULES`` in ``controller/profiles.py``: ``balance_when``,
``balance_mover``, ``balance_seat``, ``table_size``, ``break_table_at``) and a seed for the
draws; ``propose`` says what the counts call for now, or None.

A seat's place in the blind order is measured in *turns to the big blind*: the hands until a
player in that seat posts it. For an occupied seat, the occupied seats clockwise from the
seat after the big blind up to it; for an open seat, the occupied seats between the big
blind and it, plus one (a player sat there posts after them). The player due the big blind
next has one turn; the open seat just after the big blind is the *worst position* (its
player posts the big blind next hand). A seat's place relative to the button (seed 001: "the
cut-off") is the occupied seats from it clockwise up to the button.

- Balance: when the largest and the smallest table differ by more than ``balance_when``,
  players move from the largest to the smallest, enough to bring them within one (or within
  the house's difference), chosen by ``balance_mover``, seated by ``balance_seat``.
- Break: when the players left fit at one table fewer with at most ``break_table_at`` a table,
  the table with the fewest players breaks; its players draw for the open seats (a random
  table among the smallest, then a random seat: TDA's two-step draw, and every seed that
  says how), so the tables stay balanced.

Seats are 1 to the house's ``table_size`` (at most 10, ``controller/seating.py``; a table may
be shorter still, ``TableSeats.size``); a table's open seats are the others up to its size.
Clockwise distances are taken modulo 10 whatever the size: seats 1 to N < 10 keep their order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from controller.seating import SEAT_MAX, SEAT_MIN, next_occupied

if TYPE_CHECKING:
    from controller.profiles import Profile

ALL_SEATS = tuple(range(SEAT_MIN, SEAT_MAX + 1))


class BalanceMover(StrEnum):
    """The profile's ``balance_mover`` rule: who moves from the larger table."""

    BIG_BLIND_NEXT = "big_blind_next"
    KEEPS_POSITION = "keeps_position"
    SAME_POSITION = "same_position"


class BalanceSeat(StrEnum):
    """The profile's ``balance_seat`` rule: which open seat a moved player takes."""

    WORST_POSITION = "worst_position"
    SAME_POSITION = "same_position"
    LEFT_OF_BIG_BLIND = "left_of_big_blind"
    RANDOM = "random"


RULE_KEYS = ("balance_when", "balance_mover", "balance_seat", "table_size", "break_table_at")


@dataclass(frozen=True)
class TableSeats:
    """One table as the floor sees it: who is seated and where the current or last hand's
    button and big blind were (None: not known yet)."""

    table: str
    seats: tuple[int, ...]
    button: int | None = None
    big_blind: int | None = None
    small_blind: int | None = None
    size: int | None = None  # a short table's seats (None: the house's table_size)

    def blinds(self) -> tuple[int, int, int]:
        """Button, small blind and big blind seats, inferred where the table has not said:
        from the button, else the lowest seat as the button (the table's own default)."""
        seats = self.seats
        if self.big_blind is not None:
            small = self.small_blind if self.small_blind is not None else self.big_blind
            button = self.button if self.button is not None else small
            return button, small, self.big_blind
        button = self.button if self.button is not None else seats[0]
        anchor = button if button in seats else next_occupied(seats, button)
        small = next_occupied(seats, anchor) if len(seats) > 2 else anchor
        return button, small, next_occupied(seats, small)


@dataclass(frozen=True)
class Move:
    from_table: str
    from_seat: int
    to_table: str
    to_seat: int

    def to_json(self) -> dict[str, Any]:
        return {"from_table": self.from_table, "from_seat": self.from_seat,
                "to_table": self.to_table, "to_seat": self.to_seat}


@dataclass(frozen=True)
class BalanceRules:
    difference: int  # move when the counts differ by more than this
    mover: BalanceMover
    seat: BalanceSeat
    break_at: int  # break when everyone fits at one table fewer with at most this many each
    table_size: int = SEAT_MAX  # the house's seats a table

    @classmethod
    def of(cls, profile: Profile) -> BalanceRules:
        return cls(int(profile.value("balance_when")),
                   BalanceMover(profile.value("balance_mover")),
                   BalanceSeat(profile.value("balance_seat")),
                   int(profile.value("break_table_at")),
                   int(profile.value("table_size")))

    def size_of(self, table: TableSeats) -> int:
        return min(self.table_size, table.size or self.table_size)


class ProposalKind(StrEnum):
    """What the house's balancing rule proposes (``Proposal.kind``)."""

    BALANCE = "balance"  # a player moves from the largest table to the smallest
    BREAK = "break"  # a table breaks: its players go to the others


@dataclass(frozen=True)
class Proposal:
    kind: ProposalKind
    tables: tuple[str, ...]  # the tables involved: the one players leave first
    moves: tuple[Move, ...]
    reason: str
    rules: tuple[str, ...]  # the profile rules applied

    @property
    def need(self) -> tuple[ProposalKind, tuple[str, ...]]:
        """What calls for it, whoever moves: a confirmation stands while this does."""
        return self.kind, self.tables

    def to_json(self) -> dict[str, Any]:
        return {"kind": str(self.kind), "tables": list(self.tables),
                "moves": [m.to_json() for m in self.moves], "reason": self.reason,
                "rules": list(self.rules)}


def turns_to_big_blind(seats: Sequence[int], big_blind: int, seat: int) -> int:
    """Hands until a player in ``seat`` posts the big blind (see the module's text)."""
    def distance(other: int) -> int:
        return (other - big_blind) % 10 or 10

    if seat in seats:
        return sum(1 for other in seats if distance(other) <= distance(seat))
    return sum(1 for other in seats if distance(other) < distance(seat)) + 1


def seats_to_button(seats: Sequence[int], button: int, seat: int) -> int:
    """Occupied seats from ``seat`` (exclusive) clockwise up to the button (inclusive): 0 on
    the button, 1 in the cut-off."""
    reach = (button - seat) % 10
    return sum(1 for other in seats if 0 < (other - seat) % 10 <= reach)


def _open_seats(table: TableSeats, size: int) -> list[int]:
    return [s for s in ALL_SEATS[:size] if s not in table.seats]


def _worst_first(table: TableSeats, size: int) -> list[int]:
    """Open seats, the worst position first. The worst is never the small blind nor between
    the next hand's button and small blind: those seats lie between the current small and big
    blind, the last to post the big blind."""
    _, _, big = table.blinds()
    return sorted(_open_seats(table, size),
                  key=lambda s: (turns_to_big_blind(table.seats, big, s), s))


def _left_of_big_blind(table: TableSeats, size: int) -> list[int]:
    """Seed 002: "join from the Big Blind position or the next available seat to the left of
    the Big Blind": the big blind's seat if open, then clockwise."""
    _, _, big = table.blinds()
    return sorted(_open_seats(table, size), key=lambda s: (s - big) % 10)


def _balance_moves(source: TableSeats, target: TableSeats, count: int, rules: BalanceRules,
                   draw: random.Random) -> list[Move]:
    button, _, big = source.blinds()
    t_button, _, t_big = target.blinds()
    size = rules.size_of(target)
    by_blind = sorted(source.seats, key=lambda s: turns_to_big_blind(source.seats, big, s))
    if rules.seat == BalanceSeat.WORST_POSITION:
        targets = _worst_first(target, size)
    elif rules.seat == BalanceSeat.LEFT_OF_BIG_BLIND:
        targets = _left_of_big_blind(target, size)
    elif rules.seat == BalanceSeat.RANDOM:
        targets = draw.sample(_open_seats(target, size), len(_open_seats(target, size)))
    else:
        targets = _open_seats(target, size)
    moves: list[Move] = []
    movers = list(by_blind)
    if rules.mover == BalanceMover.BIG_BLIND_NEXT:
        # The player due the big blind next, then clockwise (seed 002: "in a clockwise
        # direction starting with the Big Blind", seated "in the same order").
        chosen = movers[:count]
        if rules.seat == BalanceSeat.SAME_POSITION:
            for seat in chosen:
                old = turns_to_big_blind(source.seats, big, seat)
                best = min(targets, key=lambda s: (
                    abs(turns_to_big_blind(target.seats, t_big, s) - old),
                    turns_to_big_blind(target.seats, t_big, s), s))
                targets.remove(best)
                moves.append(Move(source.table, seat, target.table, best))
            return moves
        return [Move(source.table, seat, target.table, to)
                for seat, to in zip(chosen, targets[:count], strict=True)]
    for to in targets[:count]:
        if rules.mover == BalanceMover.KEEPS_POSITION:
            # Seed 000: the player who will not lose position: one who would post the big
            # blind no sooner at the new seat; of those, the one whose place changes least.
            wanted = turns_to_big_blind(target.seats, t_big, to)
            keep = [s for s in movers if turns_to_big_blind(source.seats, big, s) <= wanted]
            seat = max(keep or movers[:1],
                       key=lambda s: turns_to_big_blind(source.seats, big, s))
        else:  # same_position, seed 001: the same place relative to the button
            wanted = seats_to_button(target.seats, t_button, to)
            seat = min(movers, key=lambda s: (
                abs(seats_to_button(source.seats, button, s) - wanted),
                turns_to_big_blind(source.seats, big, s)))
        movers.remove(seat)
        moves.append(Move(source.table, seat, target.table, to))
    return moves


def _break_moves(broken: TableSeats, others: list[TableSeats], rules: BalanceRules,
                 draw: random.Random) -> list[Move]:
    """Each player of the broken table draws a table among those with the fewest players,
    then a seat among its open ones."""
    counts = {t.table: len(t.seats) for t in others}
    open_seats = {t.table: _open_seats(t, rules.size_of(t)) for t in others}
    players = list(broken.seats)
    draw.shuffle(players)
    moves = []
    for seat in players:
        fewest = min(c for name, c in counts.items() if open_seats[name])
        table = draw.choice(sorted(name for name, c in counts.items()
                                   if c == fewest and open_seats[name]))
        to = draw.choice(open_seats[table])
        open_seats[table].remove(to)
        counts[table] += 1
        moves.append(Move(broken.table, seat, table, to))
    return sorted(moves, key=lambda m: m.from_seat)


def propose(tables: Sequence[TableSeats], rules: BalanceRules,
            seed: int = 0) -> Proposal | None:
    """What the counts call for now under the house's rules (None: nothing). ``seed`` makes
    the draws: the same seed, the same draw, so a proposal holds while it is looked at."""
    live = sorted((t for t in tables if t.seats), key=lambda t: t.table)
    if len(live) < 2:
        return None
    draw = random.Random(seed)
    total = sum(len(t.seats) for t in live)
    # The table with the fewest players breaks (of equals, the last by name), when the others
    # seat them all, at most break_at a table and never past a table's size.
    broken = min(reversed(live), key=lambda t: len(t.seats))
    others = [t for t in live if t is not broken]
    room = sum(min(rules.break_at, rules.size_of(t)) for t in others)
    if total <= room:
        moves = _break_moves(broken, others, rules, draw)
        return Proposal(
            ProposalKind.BREAK, (broken.table, *sorted({m.to_table for m in moves})), tuple(moves),
            f"{total} players fit at {len(others)} table{'s' if len(others) > 1 else ''} "
            f"of at most {_seats_a_table(others, rules)}: table {broken.table} breaks, its "
            "players draw for the open seats", ("table_size", "break_table_at"))
    largest = max(live, key=lambda t: len(t.seats))  # of equals, the first by name
    # A short table already full takes nobody, however few it seats.
    open_tables = [t for t in live if _open_seats(t, rules.size_of(t))]
    if not open_tables:
        return None
    smallest = min(reversed(open_tables), key=lambda t: len(t.seats))
    gap = len(largest.seats) - len(smallest.seats)
    if gap <= rules.difference:
        return None
    count = min(max(1, gap // 2), len(_open_seats(smallest, rules.size_of(smallest))))
    moves = _balance_moves(largest, smallest, count, rules, draw)
    who = "players" if count > 1 else "a player"
    return Proposal(
        ProposalKind.BALANCE, (largest.table, smallest.table), tuple(moves),
        f"table {largest.table} has {len(largest.seats)} players and {smallest.table} "
        f"{len(smallest.seats)}: more than {rules.difference} apart, {who} move"
        f"{'' if count > 1 else 's'}", RULE_KEYS[:4])


def _seats_a_table(tables: list[TableSeats], rules: BalanceRules) -> str:
    sizes = sorted({min(rules.break_at, rules.size_of(t)) for t in tables})
    return str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
