"""A whole tournament (tests/test_tournament.py) at a house of nine a table (Mike's, seed 003)
and of eight (the LivePubPokerLeague, seed 002): a file of its own, so that the test processes
play the houses side by side with tests/test_tournament.py's house of ten. The two houses play
at once, each its own broker, hub and tables: a tournament mostly waits for its tables to deal
(about a third of a core), and each house is checked as it would be alone."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.test_tournament import play_a_tournament

HOUSES = {"mikes-poker-tables": 9, "lppl": 8}


def test_a_whole_tournament_at_a_nine_and_an_eight_seat_house(tmp_path):
    # Each house's folder named short: its tables' button sockets lie deep inside it, and a
    # Unix socket's path has at most 107 bytes.
    for size in HOUSES.values():
        (tmp_path / f"h{size}").mkdir()
    with ThreadPoolExecutor(len(HOUSES), thread_name_prefix="house") as pool:
        played = {house: pool.submit(play_a_tournament, tmp_path / f"h{size}", house, size)
                  for house, size in HOUSES.items()}
        failures = {}
        for house, future in played.items():
            try:
                future.result()
            except BaseException as exc:  # (each house's failure said with its name)
                failures[house] = exc
    if failures:  # every house's failure, the first one's traceback
        raise AssertionError(f"houses failed: {failures!r}") from next(iter(failures.values()))
