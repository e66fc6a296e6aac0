"""Each live seat's share of the pot at a street: Hold'em, Omaha and Omaha Hi/Lo (the split shown).

Given the seats' hole cards, the board so far and the cards known to be out of play (burns,
exposed, folded hands), it counts who wins each runout of the board: every runout from the flop
on (exact), a Monte Carlo sample of runouts pre-flop, its standard error stated in the result.
Pure: no I/O, no clock; the sampling takes its ``random.Random`` from the caller.

The evaluator is its own (pokerkit's evaluation builds an object per five-card hand: too slow to
enumerate with). A hand's strength is one integer, greater the stronger: its category, then the
ranks that decide within it, as 13-bit rank masks. A rank multiset keys a table of the non-flush
value (the sum of ``5 ** rank`` over the cards: a rank is held at most four times); a suit's rank
mask keys a table of the flush value. ``tests/test_equity.py`` holds it to pokerkit's ordering
of generated hands: Hold'em's seven cards, Omaha's two hole and three board, the 8-or-better low.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb, sqrt
from typing import TYPE_CHECKING

from controller.cards import HOLE_CARDS, JOKER, parse_card
from controller.events import Street

if TYPE_CHECKING:
    import random
    from collections.abc import Iterable, Mapping, Sequence

# Ranks from the deuce (0) to the ace (12); a card is rank * 4 + suit.
_RANK_ORDER = "23456789TJQKA"
_SUIT_ORDER = "shdc"
_RANK_KEY = tuple(5 ** r for r in range(13))
_STREETS = {0: Street.PREFLOP, 3: Street.FLOP, 4: Street.TURN, 5: Street.RIVER}
_HIGH_CARD, _PAIR, _TWO_PAIR, _TRIPS, _STRAIGHT, _FLUSH, _FULL_HOUSE, _QUADS, _STRAIGHT_FLUSH = (
    range(9))

# Pre-flop samples by default: a budget of work over a sample's cost (in seats' evaluations,
# a sample's own share of drawing and counting included), so that a call stays within 100 ms
# for up to 9 seats in Hold'em and 6 in Omaha (docs/broadcast.md has the times).
_SAMPLE_BUDGET = {"holdem": (100_000, 7.5), "omaha": (6_500, 0.5), "omaha8": (6_500, 2.0)}
MAX_SAMPLES = 20_000


def default_samples(game: str, seats: int) -> int:
    """How many runouts a pre-flop call samples unless told: fewer the more seats."""
    budget, overhead = _SAMPLE_BUDGET[game]
    return min(MAX_SAMPLES, int(budget / (seats + overhead)))


def card_index(text: str) -> int:
    """A card as this module counts it: rank (deuce 0 .. ace 12) times four plus its suit."""
    card = parse_card(text)
    if card == JOKER:
        raise ValueError(f"{text!r} is no card of a standard deck")
    return _RANK_ORDER.index(card[0]) * 4 + _SUIT_ORDER.index(card[1])


def _top(mask: int, keep: int) -> int:
    """The ``keep`` highest ranks of a rank mask."""
    while mask.bit_count() > keep:
        mask &= mask - 1
    return mask


def _top_bit(mask: int) -> int:
    return 1 << (mask.bit_length() - 1) if mask else 0


def _straight_top(mask: int) -> int:
    """The top rank's bit of the highest straight in a rank mask (a wheel's is the five's), or 0."""
    low = (mask << 1) | (mask >> 12)  # the ace below the deuce as well
    starts = low & (low >> 1) & (low >> 2) & (low >> 3) & (low >> 4)
    return 1 << (starts.bit_length() + 2) if starts else 0


def _value(category: int, major: int, minor: int) -> int:
    return (category << 26) | (major << 13) | minor


def _rank_value(singles: int, pairs: int, trips: int, quads: int) -> int:
    """The best five-card high hand, flushes aside, of a rank multiset: the ranks held at least
    once, twice, three and four times."""
    if quads:
        quad = _top_bit(quads)
        return _value(_QUADS, quad, _top_bit(singles & ~quad))
    trip = _top_bit(trips)
    if trip and pairs & ~trip:
        return _value(_FULL_HOUSE, trip, _top_bit(pairs & ~trip))
    straight = _straight_top(singles)
    if straight:
        return _value(_STRAIGHT, straight, 0)
    if trip:
        return _value(_TRIPS, trip, _top(singles & ~trip, 2))
    if pairs.bit_count() >= 2:
        two = _top(pairs, 2)
        return _value(_TWO_PAIR, two, _top_bit(singles & ~two))
    if pairs:
        return _value(_PAIR, pairs, _top(singles & ~pairs, 3))
    return _value(_HIGH_CARD, 0, _top(singles, 5))


def _multiset_value(ranks: Iterable[int]) -> int:
    singles = pairs = trips = quads = 0
    for rank in ranks:
        bit = 1 << rank
        quads |= trips & bit
        trips |= pairs & bit
        pairs |= singles & bit
        singles |= bit
    return _rank_value(singles, pairs, trips, quads)


def _flush_value(mask: int) -> int:
    """The best flush (or straight flush) in one suit's rank mask of five cards or more, else 0."""
    if mask.bit_count() < 5:
        return 0
    straight = _straight_top(mask)
    if straight:
        return _value(_STRAIGHT_FLUSH, straight, 0)
    return _value(_FLUSH, 0, _top(mask, 5))


@dataclass(frozen=True, slots=True)
class _Tables:
    ranks: dict[int, int]  # the sum of 5**rank over the cards -> the non-flush value
    flush: list[int]  # a suit's rank mask -> its flush value (0: fewer than five)


_TABLES: list[_Tables] = []
_NO_LOW = 256  # above any low's rank mask: no low


def _tables() -> _Tables:
    """Built on first use (0.1 to 0.2 s) and kept: every rank multiset of five
    and of seven cards, and every suit mask."""
    if not _TABLES:
        ranks: dict[int, int] = {}

        def add(low: int, size: int, key: int, held: tuple[int, int, int, int]) -> None:
            """Every multiset that adds ranks from ``low`` up to ``held`` (its ranks held at
            least once, twice, three and four times), four of a rank at most."""
            if size in (5, 7):  # Omaha's five cards, Hold'em's seven
                ranks[key] = _rank_value(*held)
                if size == 7:
                    return
            singles, pairs, trips, quads = held
            for rank in range(low, 13):
                bit = 1 << rank
                if not quads & bit:
                    add(rank, size + 1, key + _RANK_KEY[rank],
                        (singles | bit, pairs | (singles & bit), trips | (pairs & bit),
                         quads | (trips & bit)))

        add(0, 0, 0, (0, 0, 0, 0))
        _TABLES.append(_Tables(ranks, [_flush_value(mask) for mask in range(1 << 13)]))
    return _TABLES[0]


def high_value(cards: Iterable[str]) -> int:
    """The best five-card high hand of five to seven cards, as an integer: greater is stronger,
    equal is a tie."""
    indexes = [card_index(c) for c in cards]
    if not 5 <= len(indexes) <= 7 or len(set(indexes)) != len(indexes):
        raise ValueError("a high hand is five to seven different cards")
    suits = [0, 0, 0, 0]
    for index in indexes:
        suits[index & 3] |= 1 << (index >> 2)
    return max(_multiset_value(i >> 2 for i in indexes), *(_flush_value(m) for m in suits))


def omaha_high_value(hole: Sequence[str], board: Sequence[str]) -> int:
    """Omaha's best high hand: exactly two hole cards and three of the board."""
    return max(high_value([*pair, *three]) for pair in combinations(hole, 2)
               for three in combinations(board, 3))


def _low_bit(index: int) -> int:
    """A card's bit in an ace-to-five low (the ace 0 .. the eight 7), 0 if above the eight."""
    rank = index >> 2
    if rank == 12:
        return 1
    return 1 << (rank + 1) if rank <= 6 else 0


def omaha_low_value(hole: Sequence[str], board: Sequence[str]) -> int | None:
    """Omaha's best 8-or-better low (two hole cards and three of the board, five ranks from the
    ace to the eight) as a rank mask: smaller is better; None when there is none."""
    best = None
    for pair in combinations(hole, 2):
        for three in combinations(board, 3):
            bits = [_low_bit(card_index(c)) for c in (*pair, *three)]
            mask = 0
            for bit in bits:
                mask |= bit
            if all(bits) and mask.bit_count() == 5 and (best is None or mask < best):
                best = mask
    return best


@dataclass(frozen=True, slots=True)
class SeatEquity:
    """One seat's shares over the runouts counted.

    ``win``: it alone takes the (high) pot; ``tie``: it splits it; ``equity``: its expected share
    of the whole pot; ``std_error``: the standard error of ``equity`` (0 when enumerated). In
    Omaha Hi/Lo, ``win`` and ``tie`` are the high half's, ``low_win`` and ``low_tie`` the low
    half's (a board that makes no low gives the high hand the whole pot), ``scoop`` the share of
    runouts in which it alone takes the whole pot."""

    seat: int
    win: float
    tie: float
    equity: float
    std_error: float
    low_win: float | None = None
    low_tie: float | None = None
    scoop: float | None = None


@dataclass(frozen=True, slots=True)
class Equities:
    """The live seats' shares at one street. ``exact``: every runout counted (``runouts`` of
    them), else ``runouts`` sampled at random; ``std_error``: the largest seat's standard error
    of its equity (0 when exact); ``no_low``: in Omaha Hi/Lo, the share of runouts without a
    qualifying low."""

    game: str
    street: Street
    exact: bool
    runouts: int
    std_error: float
    seats: tuple[SeatEquity, ...]
    no_low: float | None = None


@dataclass(slots=True)
class _Tally:
    win: list[float]
    tie: list[float]
    share: list[float]
    share_sq: list[float]
    low_win: list[float]
    low_tie: list[float]
    scoop: list[float]
    no_low: int = 0

    @classmethod
    def zeros(cls, seats: int) -> _Tally:
        win, tie, share, share_sq, low_win, low_tie, scoop = ([0.0] * seats for _ in range(7))
        return cls(win, tie, share, share_sq, low_win, low_tie, scoop)


def _count(tally: _Tally, values: list[int], lows: list[int] | None) -> None:
    """One runout: who wins the high (greater is stronger) and the low (smaller is better)."""
    best = max(values)
    if lows is None and values.count(best) == 1:  # one winner takes all: the common case
        i = values.index(best)
        tally.win[i] += 1
        tally.share[i] += 1
        tally.share_sq[i] += 1
        return
    high_winners = [i for i, v in enumerate(values) if v == best]
    low_winners: list[int] = []
    if lows is not None:
        best_low = min(lows)
        if best_low < _NO_LOW:
            low_winners = [i for i, v in enumerate(lows) if v == best_low]
        else:
            tally.no_low += 1
    half = 0.5 if low_winners else 1.0
    shares = dict.fromkeys(high_winners + low_winners, 0.0)
    for i in high_winners:
        shares[i] += half / len(high_winners)
    if len(high_winners) == 1:
        tally.win[high_winners[0]] += 1
    else:
        for i in high_winners:
            tally.tie[i] += 1
    if low_winners:
        for i in low_winners:
            shares[i] += 0.5 / len(low_winners)
        if len(low_winners) == 1:
            tally.low_win[low_winners[0]] += 1
        else:
            for i in low_winners:
                tally.low_tie[i] += 1
    for i, share in shares.items():
        if share == 1.0:
            tally.scoop[i] += 1
        tally.share[i] += share
        tally.share_sq[i] += share * share


def _holdem(board: Sequence[int], holes: list[list[int]], keys: list[int]) -> list[int]:
    """Each seat's best high hand of its two hole cards (rank keys ``keys``) and the board."""
    tables = _tables()
    ranks = tables.ranks
    key = 0
    suits = [0, 0, 0, 0]
    for c in board:
        key += _RANK_KEY[c >> 2]
        suits[c & 3] |= 1 << (c >> 2)
    values = [ranks[key + k] for k in keys]
    for suit, mask in enumerate(suits):
        if mask.bit_count() >= 3:  # one suit at most: a flush needs three of the board
            flush = tables.flush
            for i, (a, b) in enumerate(holes):
                value = flush[mask | ((a & 3 == suit) << (a >> 2)) | ((b & 3 == suit) << (b >> 2))]
                if value > values[i]:
                    values[i] = value
    return values


@dataclass(frozen=True, slots=True)
class _OmahaHole:
    """A seat's six pairs of hole cards, as the evaluation adds them to three of the board."""

    keys: tuple[int, ...]  # each pair's rank key
    suited: tuple[tuple[int, ...], ...]  # by suit: the rank masks of the pairs of that suit
    lows: tuple[int, ...]  # the low masks of the pairs of two different low ranks


def _omaha_hole(cards: list[int]) -> _OmahaHole:
    pairs = list(combinations(cards, 2))
    suited = tuple(tuple((1 << (a >> 2)) | (1 << (b >> 2)) for a, b in pairs
                         if a & 3 == b & 3 == suit) for suit in range(4))
    lows = {_low_bit(a) | _low_bit(b) for a, b in pairs
            if _low_bit(a) and _low_bit(b) and _low_bit(a) != _low_bit(b)}
    return _OmahaHole(tuple(_RANK_KEY[a >> 2] + _RANK_KEY[b >> 2] for a, b in pairs),
                      suited, tuple(sorted(lows)))


def _omaha(board: Sequence[int], holes: list[_OmahaHole],
           hi_lo: bool) -> tuple[list[int], list[int] | None]:
    tables = _tables()
    ranks, flush = tables.ranks, tables.flush
    threes = list(combinations(board, 3))
    keys = [_RANK_KEY[a >> 2] + _RANK_KEY[b >> 2] + _RANK_KEY[c >> 2] for a, b, c in threes]
    suited = [(a & 3, (1 << (a >> 2)) | (1 << (b >> 2)) | (1 << (c >> 2)))
              for a, b, c in threes if a & 3 == b & 3 == c & 3]
    values = []
    for hole in holes:
        value = max([ranks[h + k] for h in hole.keys for k in keys])
        for suit, mask in suited:
            for pair in hole.suited[suit]:
                value = max(value, flush[pair | mask])
        values.append(value)
    if not hi_lo:
        return values, None
    low_threes = set()
    for three in threes:
        bits = [_low_bit(c) for c in three]
        mask = bits[0] | bits[1] | bits[2]
        if all(bits) and mask.bit_count() == 3:
            low_threes.add(mask)
    lows = [min([h | k for h in hole.lows for k in low_threes if not h & k], default=_NO_LOW)
            for hole in holes]
    return values, lows


def equities(game: str, hole: Mapping[int, Sequence[str]], board: Sequence[str] = (),
             dead: Iterable[str] = (), rng: random.Random | None = None,
             samples: int | None = None) -> Equities:
    """Each live seat's win, tie and pot share at the street the board is at.

    ``game``: ``holdem``, ``omaha`` or ``omaha8``; ``hole``: each live seat's hole cards, all
    known; ``board``: none, the flop, the turn or the river; ``dead``: cards out of play (burns,
    exposed or folded cards): neither a seat's nor the board's. From the flop on every runout is
    counted; pre-flop ``samples`` runouts (by default ``default_samples(game, seats)``) drawn with
    ``rng``, which the caller seeds."""
    if game not in HOLE_CARDS:
        raise ValueError(f"unknown game {game!r}: one of {', '.join(HOLE_CARDS)}")
    if not hole:
        raise ValueError("no live seat")
    seats = sorted(hole)
    holes = [[card_index(c) for c in hole[seat]] for seat in seats]
    board_cards = [card_index(c) for c in board]
    known = [c for cards in holes for c in cards] + board_cards + [card_index(c) for c in dead]
    if len(set(known)) != len(known):
        raise ValueError("a card is given twice (hole, board and dead cards are all different)")
    for seat, cards in zip(seats, holes, strict=True):
        if len(cards) != HOLE_CARDS[game]:
            raise ValueError(f"seat {seat} has {len(cards)} hole cards: {game} deals "
                             f"{HOLE_CARDS[game]}")
    if len(board_cards) not in _STREETS:
        raise ValueError(f"a board of {len(board_cards)} cards: none, three, four or five")
    deck = sorted(set(range(52)) - set(known))
    to_come = 5 - len(board_cards)
    if len(deck) < to_come:
        raise ValueError(f"{len(deck)} cards left: the board needs {to_come}")
    exact = bool(board_cards)
    if exact:
        runouts: Iterable[tuple[int, ...]] = combinations(deck, to_come)
        count = comb(len(deck), to_come)
    else:
        if rng is None:
            raise ValueError("pre-flop equities are sampled: pass a seeded random.Random")
        count = default_samples(game, len(seats)) if samples is None else samples
        if count < 2:
            raise ValueError("at least two samples (the standard error needs two)")
        runouts = (tuple(rng.sample(deck, 5)) for _ in range(count))
    tally = _Tally.zeros(len(seats))
    if game == "holdem":
        keys = [_RANK_KEY[a >> 2] + _RANK_KEY[b >> 2] for a, b in holes]
        for runout in runouts:
            _count(tally, _holdem((*board_cards, *runout), holes, keys), None)
    else:
        omaha_holes = [_omaha_hole(cards) for cards in holes]
        hi_lo = game == "omaha8"
        for runout in runouts:
            values, lows = _omaha((*board_cards, *runout), omaha_holes, hi_lo)
            _count(tally, values, lows)
    return _result(game, _STREETS[len(board_cards)], exact, count, seats, tally)


def _result(game: str, street: Street, exact: bool, count: int, seats: list[int],
            tally: _Tally) -> Equities:
    hi_lo = game == "omaha8"
    rows = []
    for i, seat in enumerate(seats):
        mean = tally.share[i] / count
        if exact:
            error = 0.0
        else:  # the sample variance of the seat's share, over the count
            variance = max(0.0, (tally.share_sq[i] - count * mean * mean) / (count - 1))
            error = sqrt(variance / count)
        rows.append(SeatEquity(
            seat=seat, win=tally.win[i] / count, tie=tally.tie[i] / count, equity=mean,
            std_error=error,
            low_win=tally.low_win[i] / count if hi_lo else None,
            low_tie=tally.low_tie[i] / count if hi_lo else None,
            scoop=tally.scoop[i] / count if hi_lo else None))
    return Equities(game=game, street=street, exact=exact, runouts=count,
                    std_error=max(r.std_error for r in rows), seats=tuple(rows),
                    no_low=tally.no_low / count if hi_lo else None)
