"""Payouts (controller/payouts.py) and the payout tables (houses/payouts/): the pool, the places
paid, the pay jumps and a deal's chip-chop and ICM shares, held to their properties."""

from __future__ import annotations

import re
from fractions import Fraction
from itertools import pairwise, permutations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.payouts import (
    WHOLE,
    PayJump,
    PayoutError,
    PayoutTable,
    PayoutTableError,
    chip_chop,
    deal,
    icm,
    payout_table_from_data,
    prize_pool,
)
from houses import DEFAULT_PAYOUT_TABLE
from houses.loaders import builtin_payout_tables, load_payout_table

SEEDS = Path(__file__).resolve().parents[1] / "docs" / "seeds"


def _normal(text: str) -> str:
    text = (text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
            .replace("\u201d", '"').replace("\u2013", "-").replace("\u2014", "-"))
    return re.sub(r"\s+", " ", text).strip()


def test_the_default_table_is_built_in_and_says_where_it_comes_from():
    assert DEFAULT_PAYOUT_TABLE in builtin_payout_tables()
    table = load_payout_table(DEFAULT_PAYOUT_TABLE)
    assert table.source.startswith("project default")
    # its quote is seed 004's own words (the one seed that speaks of a prize per placement)
    assert _normal(table.quote) in _normal(
        (SEEDS / "004_33a0b8fa9b3ede2f.txt").read_text(encoding="utf-8"))
    assert (table.fee_per_entry, table.fee_per_add_on, table.fee_percent) == (0, 0, 0)


def test_a_saturdays_150_entries_pay_15_places_to_the_last_unit():
    table = load_payout_table(DEFAULT_PAYOUT_TABLE)
    paid = prize_pool(table, buy_in=50, add_on_price=25, entries=120, re_entries=30,
                      add_ons=60)
    assert (paid.entries, paid.gross, paid.fee, paid.pool) == (150, 9000, 0, 9000)
    assert paid.prizes == (2160, 1350, 990, 765, 630, 540, 450, 378, 324, 279, 243, 234, 225,
                           216, 216)
    assert paid.in_the_money(15) and not paid.in_the_money(16)
    # the bubble: at 16 left the next out wins nothing; at 15 left the next out wins 216
    assert paid.next_pay_jump(16) == PayJump(15, 216)
    # 15th and 14th pay alike: the next jump from 15 left is at 13 left
    assert paid.next_pay_jump(15) == PayJump(13, 225)
    assert paid.next_pay_jump(2) == PayJump(1, 2160)
    assert paid.next_pay_jump(1) is None
    assert paid.prizes_left(3) == (2160, 1350, 990)


def test_the_fees_come_out_first_and_the_rounding_goes_to_first_place():
    table = payout_table_from_data({
        "source": "house", "unit": 5,
        "fee": {"per_entry": 10, "per_add_on": 5, "percent": 2.5},
        "paid": [{"from_entries": 1, "shares": [100]},
                 {"from_entries": 3, "shares": [50, 30, 20]}]}, "house")
    paid = prize_pool(table, buy_in=60, add_on_price=25, entries=7, add_ons=3)
    # gross 7 x 60 + 3 x 25 = 495; fixed fees 70 + 15 = 85; 2.5 % of 410 = 10.25 -> 10
    assert (paid.gross, paid.fee, paid.pool) == (495, 95, 400)
    assert paid.prizes == (200, 120, 80)
    paid = prize_pool(table, buy_in=60, entries=4)
    # 4 x 50 = 200 after the fixed fee; 2.5 % -> 5; 195: 97.5 -> 95, 58.5 -> 55, 39 -> 35
    assert paid.pool == 195 and paid.prizes == (105, 55, 35)
    with pytest.raises(PayoutError, match="fee per entry"):
        prize_pool(table, buy_in=5, entries=3)
    with pytest.raises(PayoutError, match="entries"):
        prize_pool(table, buy_in=60, entries=-1)


def test_a_bad_table_lists_every_problem_at_once():
    with pytest.raises(PayoutTableError) as caught:
        payout_table_from_data({
            "colour": "red", "unit": 0, "fee": {"percent": 120, "rake": 1},
            "paid": [{"from_entries": 2, "shares": [30, 70, 0.125]},
                     {"from_entries": 2, "shares": [60, 40], "place": 1},
                     {"from_entries": 5, "shares": [50, 30, 10]},
                     "nine"]}, "house")
    problems = "\n".join(caught.value.problems)
    for expected in ("colour: unknown key", "source: say where", "unit: must be a whole number",
                     "fee.rake: unknown key", "fee.percent: 120",
                     "paid[0].shares[2]: 0.125 has more than two decimals",
                     "paid[1].place: unknown key",
                     "paid[2].shares: add up to 90, not 100", "paid[3]: must be a table"):
        assert expected in problems, expected
    assert str(caught.value).startswith("payout table house has")
    with pytest.raises(PayoutTableError) as caught:
        payout_table_from_data({"source": "house", "paid": [
            {"from_entries": 2, "shares": [30, 70]},
            {"from_entries": 5, "shares": [40, 30, 20, 10]},
            {"from_entries": 3, "shares": [100]},
            {"from_entries": 10, "shares": [100]}]}, "house")
    assert caught.value.problems == [
        "paid[0].shares: a place gets more than the place above it",
        "paid[2].from_entries: 3 does not follow 5; rows go up by entries",
        "paid[3].shares: 1 places paid from 10 entries, fewer than the 4 from 5",
    ]
    with pytest.raises(PayoutTableError, match="3 places paid from 2 entries"):
        payout_table_from_data({"source": "house", "paid": [
            {"from_entries": 2, "shares": [50, 30, 20]}]}, "house")
    with pytest.raises(PayoutTableError, match="no payout table named 'nope'"):
        load_payout_table("nope")
    # A table sent to the hub as JSON: a number too big to make a percentage of is a problem
    # listed, not an overflow (1e308 a hundredfold is infinity).
    with pytest.raises(PayoutTableError) as caught:
        payout_table_from_data({"source": "house", "fee": {"percent": 1e308}, "paid": [
            {"from_entries": 1, "shares": [float("nan")]}]}, "house")
    assert caught.value.problems == ["fee.percent: 1e+308 is not between 0 and 99.99",
                                     "paid[0].shares[0]: nan is not between 0 and 100"]


def test_a_houses_own_table_is_read_from_its_path(tmp_path):
    path = tmp_path / "house.toml"
    path.write_text('source = "our floor"\n[[paid]]\nfrom_entries = 1\nshares = [100]\n',
                    encoding="utf-8")
    assert load_payout_table(str(path)).rows[0].shares == (WHOLE,)
    path.write_text("source = \n", encoding="utf-8")
    with pytest.raises(PayoutTableError, match="not valid TOML"):
        load_payout_table(str(path))


@st.composite
def tables(draw) -> PayoutTable:
    """A valid payout table: rows going up by entries, each paying no fewer places than the
    one before and no more than its entries, shares non-increasing adding up to 100."""
    rows, start, places = [], draw(st.integers(1, 3)), 0
    for _ in range(draw(st.integers(1, 4))):
        places = draw(st.integers(max(places, 1), max(places, 1) + 3))
        start = max(start, places)
        cuts = sorted(draw(st.lists(st.integers(1, WHOLE - 1), min_size=places - 1,
                                    max_size=places - 1, unique=True)))
        parts = sorted((b - a for a, b in zip([0, *cuts], [*cuts, WHOLE], strict=True)),
                       reverse=True)
        rows.append({"from_entries": start, "shares": [p / 100 for p in parts]})
        start += draw(st.integers(1, 20))
    return payout_table_from_data({
        "source": "drawn", "unit": draw(st.sampled_from([1, 1, 5, 25, 100])),
        "fee": {"per_entry": draw(st.integers(0, 10)), "per_add_on": draw(st.integers(0, 5)),
                "percent": draw(st.integers(0, 2000)) / 100},
        "paid": rows}, "drawn")


@settings(max_examples=400)
@given(tables(), st.integers(10, 10_000), st.integers(5, 5000), st.integers(0, 300),
       st.integers(0, 100), st.integers(0, 300))
def test_the_prizes_add_up_to_the_pool_and_never_rise_by_place(
        table, buy_in, add_on_price, entries, re_entries, add_ons):
    paid = prize_pool(table, buy_in=buy_in, add_on_price=add_on_price, entries=entries,
                      re_entries=re_entries, add_ons=add_ons)
    assert paid.gross == buy_in * (entries + re_entries) + add_on_price * add_ons
    assert 0 <= paid.fee <= paid.gross and paid.pool == paid.gross - paid.fee
    assert paid.places_paid <= max(paid.entries, 0)
    if paid.prizes:
        assert sum(paid.prizes) == paid.pool
        assert all(a >= b for a, b in pairwise(paid.prizes))
        # every place below the first is its share rounded down to the unit
        assert all(p % table.unit == 0 for p in paid.prizes[1:])
        shares = table.shares_for(paid.entries)
        for prize, share in zip(paid.prizes[1:], shares[1:], strict=True):
            assert 0 <= Fraction(paid.pool * share, WHOLE) - prize < table.unit
    for left in range(1, paid.places_paid + 3):
        assert paid.in_the_money(left) == (left <= paid.places_paid)
        jump = paid.next_pay_jump(left)
        if jump is not None:
            assert jump.players_left < left and jump.prize > paid.prize(left)
            assert all(paid.prize(p) == paid.prize(left)
                       for p in range(jump.players_left + 1, left))
        else:
            assert all(paid.prize(p) <= paid.prize(left) for p in range(1, left))


def brute_force_icm(stacks, prizes):
    """Malmuth-Harville by every finishing order, each order's probability the product of
    each place going to its player in proportion to the chips not yet placed."""
    equity = [Fraction(0)] * len(stacks)
    for order in permutations(range(len(stacks))):
        chance, left = Fraction(1), sum(stacks)
        for i in order:
            chance *= Fraction(stacks[i], left)
            left -= stacks[i]
        for place, i in enumerate(order):
            if place < len(prizes):
                equity[i] += chance * prizes[place]
    return equity


def test_icm_matches_wikipedias_worked_example():
    """Wikipedia, "Independent Chip Model", section Model: A, B and C hold 50 %, 30 % and 20 %
    of the chips, first pays 70 and second 30: ICM(A) ~ 45, ICM(B) ~ 32, ICM(C) ~ 22
    (https://en.wikipedia.org/wiki/Independent_Chip_Model). Exactly, by its own products:
    A = 70 x 0.5 + 30 x (0.3 x 0.5/0.7 + 0.2 x 0.5/0.8) = 1265/28, B = 129/4, C = 158/7."""
    exact = icm([50, 30, 20], [70, 30, 0])
    assert exact == [Fraction(1265, 28), Fraction(129, 4), Fraction(158, 7)]
    assert [int(x) for x in exact] == [45, 32, 22]
    assert exact == brute_force_icm([50, 30, 20], [70, 30, 0])
    split = deal({"A": 5000, "B": 3000, "C": 2000}, [70, 30, 0])
    assert [s.icm for s in split.shares] == [45, 32, 23]  # 45.18, 32.25, 22.57
    assert [s.chip_chop for s in split.shares] == [50, 30, 20]


stacks_st = st.lists(st.integers(1, 100_000), min_size=2, max_size=6)


@st.composite
def stacks_and_prizes(draw):
    stacks = draw(stacks_st)
    prizes = sorted(draw(st.lists(st.integers(0, 50_000), min_size=len(stacks),
                                  max_size=len(stacks))), reverse=True)
    return stacks, prizes


@settings(max_examples=200)
@given(stacks_and_prizes())
def test_icm_is_malmuth_harville_by_every_finishing_order(case):
    stacks, prizes = case
    assert icm(stacks, prizes) == brute_force_icm(stacks, prizes)


@settings(max_examples=300)
@given(stacks_and_prizes())
def test_a_deal_shares_the_prizes_left_exactly_both_ways(case):
    stacks, prizes = case
    split = deal([(f"p{i}", s) for i, s in enumerate(stacks)], prizes)
    total = sum(prizes)
    assert sum(s.icm for s in split.shares) == total == split.total
    assert sum(s.chip_chop for s in split.shares) == total
    assert sum(s.icm_exact for s in split.shares) == total
    for share in split.shares:
        # ICM: between the smallest and the largest prize, exactly and in whole units
        assert min(prizes) <= share.icm_exact <= max(prizes)
        assert min(prizes) <= share.icm <= max(prizes)
        # chip chop: in proportion to the chips
        assert share.chip_chop_exact == Fraction(total * share.stack, sum(stacks))
        for exact, whole in ((share.icm_exact, share.icm),
                             (share.chip_chop_exact, share.chip_chop)):
            assert exact - 1 < whole < exact + 1
    # more chips never get less (both ways, exactly)
    by_stack = sorted(split.shares, key=lambda s: s.stack)
    assert all(a.icm_exact <= b.icm_exact and a.chip_chop_exact <= b.chip_chop_exact
               for a, b in pairwise(by_stack))


@settings(max_examples=200)
@given(st.integers(1, 10**6), st.integers(2, 7), st.lists(st.integers(0, 10**5), min_size=7,
                                                           max_size=7))
def test_equal_stacks_get_equal_shares(stack, players, drawn):
    prizes = sorted(drawn[:players], reverse=True)
    exact = icm([stack] * players, prizes)
    assert len(set(exact)) == 1 and exact[0] == Fraction(sum(prizes), players)
    assert chip_chop([stack] * players, prizes) == exact
    amounts = [s.icm for s in deal([(str(i), stack) for i in range(players)], prizes).shares]
    assert max(amounts) - min(amounts) <= 1  # whole units: a unit left over goes to one


def test_two_players_icm_is_the_second_prize_and_the_difference_by_chips():
    exact = icm([3000, 1000], [700, 300])
    assert exact == [300 + Fraction(400 * 3, 4), 300 + Fraction(400, 4)]


def test_a_final_table_of_ten_is_quick_and_a_bad_deal_is_refused():
    stacks = {f"p{i}": 1000 * (i + 1) for i in range(10)}
    prizes = [2160, 1350, 990, 765, 630, 540, 450, 378, 324, 279]
    split = deal(stacks, prizes)
    assert sum(s.icm for s in split.shares) == sum(prizes)
    with pytest.raises(PayoutError, match="between 2 and 10 players"):
        deal({**stacks, "p10": 5}, [*prizes, 0])
    with pytest.raises(PayoutError, match="stack is a whole number"):
        deal({"a": 100, "b": 0}, [10, 5])
    with pytest.raises(PayoutError, match="2 players share places 1 to 2"):
        deal({"a": 100, "b": 50}, [10, 5, 1])
