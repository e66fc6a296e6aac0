"""Payouts, pure: the prize pool, the places paid and each place's prize, the next pay jump, and
a deal at the final table (chip-chop and ICM side by side). No file, clock or floor state: the
house's payout table (``houses/payouts/<name>.toml``, read by ``houses/loaders.py``) and the
counts come in, figures go out. Money is whole units of the structure's ``currency``.

A payout table is data:

- ``unit``: each prize is rounded down to a multiple of it (1: whole units; 5: fives); what the
  rounding leaves goes to first place, so that the prizes add up to the pool exactly;
- ``[fee]``: what the house takes out before the pool, first a fixed ``per_entry`` (out of
  each entry's and re-entry's buy-in) and ``per_add_on``, then ``percent`` of what is left
  (rounded down: the pool keeps the fraction);
- ``[[paid]]``: rows ``from_entries`` (from this many entries, until the next row's) and
  ``shares`` (percent of the pool by place, first place first, at most two decimals, adding up
  to 100, never more for a place than for the one above it, never more places than the row's
  entries). Entries count every buy-in: first entries and re-entries, not add-ons.

A deal splits the prizes still to be won (places 1 to n for n players left) among the players
left by their entered stacks, two ways: a chip chop (in proportion to the chips) and ICM
(Malmuth-Harville: a player finishes first with the probability of his share of the chips, and
each next place goes the same way among those not yet placed). Each share is given exactly
(a ``Fraction``) and in whole units, rounded by largest remainder so that the amounts add up
to the prizes exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from typing import Any

from controller.datafiles import ProblemsError

# Percentages are kept in hundredths of a percent (basis points): integer arithmetic, exact.
WHOLE = 10_000
# A deal's ICM looks at every subset of the players left: 2**n states. A final table seats ten.
MAX_DEAL_PLAYERS = 10

_TOP_KEYS = {"title", "source", "quote", "note", "unit", "fee", "paid"}
_FEE_KEYS = {"per_entry", "per_add_on", "percent"}
_ROW_KEYS = {"from_entries", "shares", "note"}


class PayoutTableError(ProblemsError):
    """A payout table that cannot be used; ``problems`` lists every one with its key."""

    subject = "payout table"


class PayoutError(ValueError):
    """Figures a payout cannot be computed from (a negative count, a fee over the buy-in, a
    deal with no chips): the caller's mistake, said in one sentence."""


@dataclass(frozen=True, slots=True)
class PaidRow:
    from_entries: int
    shares: tuple[int, ...]  # basis points of the pool by place, first place first; sum WHOLE


@dataclass(frozen=True, slots=True)
class PayoutTable:
    name: str
    title: str
    source: str
    rows: tuple[PaidRow, ...]  # by from_entries, ascending
    unit: int = 1
    fee_per_entry: int = 0
    fee_per_add_on: int = 0
    fee_percent: int = 0  # basis points of what is left after the fixed fees
    quote: str = ""
    note: str = ""

    def shares_for(self, entries: int) -> tuple[int, ...]:
        """The shares (basis points) paid for this many entries: the last row whose
        ``from_entries`` it reaches; none below the first row."""
        shares: tuple[int, ...] = ()
        for row in self.rows:
            if entries >= row.from_entries:
                shares = row.shares
        return shares


def _basis_points(value: Any, where: str, problems: list[str], *, most: int) -> int:
    """A percentage with at most two decimals, in basis points (0 if it is not one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.append(f"{where}: must be a number (a percentage), not {value!r}")
        return 0
    if not -1e6 < value < 1e6:  # NaN, infinity, or a 1e308 that a hundredfold overflows
        problems.append(f"{where}: {value!r} is not between 0 and {most / 100:g}")
        return 0
    points = round(value * 100)
    if abs(value * 100 - points) > 1e-6:
        problems.append(f"{where}: {value!r} has more than two decimals")
    elif not 0 <= points <= most:
        problems.append(f"{where}: {value!r} is not between 0 and {most / 100:g}")
    return points


def _whole(data: Mapping[str, Any], key: str, where: str, problems: list[str], *,
           default: int, least: int) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        problems.append(f"{where}: must be a whole number, {least} or more, not {value!r}")
        return default
    return value


def _paid_row(entry: Any, where: str, problems: list[str]) -> PaidRow | None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: must be a table (from_entries, shares)")
        return None
    for key in sorted(set(entry) - _ROW_KEYS):
        problems.append(f"{where}.{key}: unknown key (allowed: {', '.join(sorted(_ROW_KEYS))})")
    count = len(problems)
    from_entries = _whole(entry, "from_entries", f"{where}.from_entries", problems, default=1,
                          least=1)
    raw = entry.get("shares")
    if not isinstance(raw, list) or not raw:
        problems.append(f"{where}.shares: must be a non-empty list of percentages by place")
        return None
    shares = [_basis_points(s, f"{where}.shares[{i}]", problems, most=WHOLE)
              for i, s in enumerate(raw)]
    if len(problems) > count:
        return None
    if any(s == 0 for s in shares):
        problems.append(f"{where}.shares: every place paid gets more than 0")
    if sum(shares) != WHOLE:
        problems.append(f"{where}.shares: add up to {sum(shares) / 100:g}, not 100")
    if any(later > earlier for earlier, later in pairwise(shares)):
        problems.append(f"{where}.shares: a place gets more than the place above it")
    if len(shares) > from_entries:
        problems.append(f"{where}.shares: {len(shares)} places paid from {from_entries} "
                        "entries (never more places than entries)")
    return PaidRow(from_entries, tuple(shares))


def payout_table_from_data(data: Mapping[str, Any], origin: str) -> PayoutTable:
    """The payout table in ``data`` (a parsed TOML document), named ``origin``; every problem
    is listed at once (``PayoutTableError``)."""
    problems: list[str] = []
    for key in sorted(set(data) - _TOP_KEYS):
        problems.append(f"{key}: unknown key (allowed: {', '.join(sorted(_TOP_KEYS))})")
    for key in ("title", "source", "quote", "note"):
        if not isinstance(data.get(key, ""), str):
            problems.append(f"{key}: must be a text")
    if not str(data.get("source", "")).strip():
        problems.append("source: say where the table comes from (a seed and its rule, or "
                        "the house's own decision)")
    unit = _whole(data, "unit", "unit", problems, default=1, least=1)
    fee = data.get("fee", {})
    if not isinstance(fee, dict):
        problems.append("fee: must be a table (per_entry, per_add_on, percent)")
        fee = {}
    for key in sorted(set(fee) - _FEE_KEYS):
        problems.append(f"fee.{key}: unknown key (allowed: {', '.join(sorted(_FEE_KEYS))})")
    per_entry = _whole(fee, "per_entry", "fee.per_entry", problems, default=0, least=0)
    per_add_on = _whole(fee, "per_add_on", "fee.per_add_on", problems, default=0, least=0)
    percent = _basis_points(fee.get("percent", 0), "fee.percent", problems, most=WHOLE - 1)
    paid = data.get("paid")
    rows: list[PaidRow] = []
    if not isinstance(paid, list) or not paid:
        problems.append("paid: must be a non-empty list of [[paid]] rows (from_entries, "
                        "shares)")
        paid = []
    for i, entry in enumerate(paid):
        row = _paid_row(entry, f"paid[{i}]", problems)
        if row is None:
            continue
        if rows and row.from_entries <= rows[-1].from_entries:
            problems.append(f"paid[{i}].from_entries: {row.from_entries} does not follow "
                            f"{rows[-1].from_entries}; rows go up by entries")
            continue  # the next row is held to the last one in order
        if rows and len(row.shares) < len(rows[-1].shares):
            problems.append(f"paid[{i}].shares: {len(row.shares)} places paid from "
                            f"{row.from_entries} entries, fewer than the "
                            f"{len(rows[-1].shares)} from {rows[-1].from_entries}")
        rows.append(row)
    if problems:
        raise PayoutTableError(origin, problems)
    return PayoutTable(origin, str(data.get("title", origin)), str(data["source"]),
                       tuple(rows), unit, per_entry, per_add_on, percent,
                       str(data.get("quote", "")), str(data.get("note", "")))


@dataclass(frozen=True, slots=True)
class PayJump:
    """At ``players_left`` players left, the next player out wins ``prize`` (more than the
    next player out wins now)."""

    players_left: int
    prize: int


@dataclass(frozen=True, slots=True)
class Payouts:
    """The prize pool and each place's prize, for this many entries and add-ons."""

    entries: int  # every buy-in: first entries and re-entries
    add_ons: int
    gross: int  # what the entries and add-ons paid
    fee: int  # what the house took out first
    pool: int  # gross - fee: what the prizes share
    prizes: tuple[int, ...]  # by place, first place first; sum == pool when any place is paid

    @property
    def places_paid(self) -> int:
        return len(self.prizes)

    def prize(self, place: int) -> int:
        """What finishing in ``place`` (1 = the winner) pays; 0 past the places paid."""
        return self.prizes[place - 1] if 1 <= place <= len(self.prizes) else 0

    def in_the_money(self, players_left: int) -> bool:
        """Every player left wins a prize (a place is paid and no more players are left than
        places paid)."""
        return 0 < players_left <= self.places_paid

    def prizes_left(self, players_left: int) -> tuple[int, ...]:
        """The prizes still to be won by ``players_left`` players, places 1 to players_left
        (0 for a place not paid): what a deal splits."""
        return tuple(self.prize(place) for place in range(1, players_left + 1))

    def next_pay_jump(self, players_left: int) -> PayJump | None:
        """Where the prize next goes up: the most players left at which the next player out
        wins more than the next player out wins now (who finishes in place
        ``players_left``). None when nothing higher is left to win (one player left, or no
        place paid)."""
        now = self.prize(players_left)
        for place in range(min(players_left - 1, self.places_paid), 0, -1):
            if self.prize(place) > now:
                return PayJump(place, self.prize(place))
        return None


def prize_pool(table: PayoutTable, *, buy_in: int, add_on_price: int = 0, entries: int,
               re_entries: int = 0, add_ons: int = 0) -> Payouts:
    """The prize pool and the places paid for ``entries`` first entries and ``re_entries``
    re-entries (each at ``buy_in``, the structure's) and ``add_ons`` (each at
    ``add_on_price``). The fixed fees come out first, then the percentage of what is left
    (rounded down: the pool keeps the fraction); each place gets its share of the pool rounded
    down to the table's unit, and first place what the rounding leaves."""
    for label, value in (("buy_in", buy_in), ("add_on_price", add_on_price),
                         ("entries", entries), ("re_entries", re_entries),
                         ("add_ons", add_ons)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise PayoutError(f"{label}: a whole number, 0 or more, not {value!r}")
    if table.fee_per_entry > buy_in:
        raise PayoutError(f"the fee per entry ({table.fee_per_entry}) is more than the "
                          f"buy-in ({buy_in})")
    if add_ons and table.fee_per_add_on > add_on_price:
        raise PayoutError(f"the fee per add-on ({table.fee_per_add_on}) is more than the "
                          f"add-on's price ({add_on_price})")
    buy_ins = entries + re_entries
    gross = buy_in * buy_ins + add_on_price * add_ons
    fixed = table.fee_per_entry * buy_ins + table.fee_per_add_on * add_ons
    fee = fixed + (gross - fixed) * table.fee_percent // WHOLE
    pool = gross - fee
    shares = table.shares_for(buy_ins)
    prizes = [pool * share // WHOLE // table.unit * table.unit for share in shares]
    if prizes:
        prizes[0] += pool - sum(prizes)
    return Payouts(buy_ins, add_ons, gross, fee, pool, tuple(prizes))


@dataclass(frozen=True, slots=True)
class DealShare:
    """One player's share of a deal, both ways: exactly and in whole units."""

    player: str
    stack: int
    chip_chop: int
    icm: int
    chip_chop_exact: Fraction
    icm_exact: Fraction


@dataclass(frozen=True, slots=True)
class Deal:
    prizes: tuple[int, ...]  # the prizes split, places 1 to n
    shares: tuple[DealShare, ...]  # in the order the stacks were given

    @property
    def total(self) -> int:
        return sum(self.prizes)


def _stacks(stacks: Mapping[str, int] | Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    pairs = list(stacks.items()) if isinstance(stacks, Mapping) else list(stacks)
    if not 2 <= len(pairs) <= MAX_DEAL_PLAYERS:
        raise PayoutError(f"a deal is between 2 and {MAX_DEAL_PLAYERS} players, not "
                          f"{len(pairs)}")
    if len({player for player, _ in pairs}) != len(pairs):
        raise PayoutError("a player is named twice in the deal")
    for player, stack in pairs:
        if isinstance(stack, bool) or not isinstance(stack, int) or stack <= 0:
            raise PayoutError(f"{player}: a stack is a whole number of chips over 0, not "
                              f"{stack!r}")
    return pairs


def chip_chop(stacks: Sequence[int], prizes: Sequence[int]) -> list[Fraction]:
    """Each player's share of the prizes in proportion to his chips."""
    chips = sum(stacks)
    return [Fraction(sum(prizes) * stack, chips) for stack in stacks]


def icm(stacks: Sequence[int], prizes: Sequence[int]) -> list[Fraction]:
    """Each player's expected prize by the Malmuth-Harville model, exactly: places are filled
    from the first, each going to a player not yet placed with the probability of his share
    of their chips. One pass over the subsets of players placed (``2**n``)."""
    n = len(stacks)
    equity = [Fraction(0)] * n
    chance: dict[int, Fraction] = {0: Fraction(1)}  # players placed (a bit each) -> probability
    sums = {0: 0}
    for place in range(min(n, len(prizes))):
        following: dict[int, Fraction] = {}
        for placed, p in chance.items():
            left = sum(stacks) - sums[placed]
            for i in range(n):
                if placed >> i & 1:
                    continue
                q = p * Fraction(stacks[i], left)
                equity[i] += q * prizes[place]
                nxt = placed | 1 << i
                following[nxt] = following.get(nxt, Fraction(0)) + q
                sums[nxt] = sums[placed] + stacks[i]
        chance = following
    return equity


def whole_units(exact: Sequence[Fraction], total: int, order: Sequence[int]) -> list[int]:
    """``exact`` (adding up to ``total``) in whole units adding up to ``total``: each rounded
    down, the units left one each to the largest fractions (ties by ``order``, smaller first).
    Each amount is its exact value's floor or ceiling."""
    floors = [x.numerator // x.denominator for x in exact]
    left = total - sum(floors)
    ranked = sorted(range(len(exact)), key=lambda i: (-(exact[i] - floors[i]), order[i]))
    for i in ranked[:left]:
        floors[i] += 1
    return floors


def deal(stacks: Mapping[str, int] | Sequence[tuple[str, int]],
         prizes: Sequence[int]) -> Deal:
    """A deal among the players left (name -> entered stack) for ``prizes`` (places 1 to n for
    n players; ``Payouts.prizes_left``): chip-chop and ICM, side by side. A unit the rounding
    leaves goes to the larger fraction, between equal fractions to the bigger stack, then to
    the player named first."""
    pairs = _stacks(stacks)
    if len(prizes) != len(pairs):
        raise PayoutError(f"{len(pairs)} players share places 1 to {len(pairs)}, not "
                          f"{len(prizes)} prizes")
    if any(isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in prizes):
        raise PayoutError("a prize is a whole amount, 0 or more")
    chips = [stack for _, stack in pairs]
    total = sum(prizes)
    # ties: the bigger stack first, then the order given
    order = sorted(range(len(pairs)), key=lambda i: (-chips[i], i))
    rank = [order.index(i) for i in range(len(pairs))]
    chop_exact = chip_chop(chips, prizes)
    icm_exact = icm(chips, prizes)
    chop = whole_units(chop_exact, total, rank)
    by_icm = whole_units(icm_exact, total, rank)
    return Deal(tuple(prizes), tuple(
        DealShare(player, stack, chop[i], by_icm[i], chop_exact[i], icm_exact[i])
        for i, (player, stack) in enumerate(pairs)))
