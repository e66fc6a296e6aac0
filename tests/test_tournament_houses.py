"""A whole tournament (tests/test_tournament.py) at a house of nine a table (Mike's, seed 003)
and of eight (the LivePubPokerLeague, seed 002): a file of its own, so that the test processes
play the houses side by side."""

from __future__ import annotations

import pytest

from tests.test_tournament import play_a_tournament


@pytest.mark.parametrize("house,size", [("mikes-poker-tables", 9), ("lppl", 8)])
def test_a_whole_tournament_at_a_nine_and_an_eight_seat_house(tmp_path, house, size):
    play_a_tournament(tmp_path, house, size)
