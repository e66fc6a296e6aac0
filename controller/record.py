"""The hand record: every seat's cards, the board, and each seat's best hand, via pokerkit.

Evaluation runs once at the end of a hand, never on the per-card path. The record is private
data (hole cards): it goes on the ``private`` topic only. Pure computation: pokerkit is a pure
library and is imported on first use.
"""

from __future__ import annotations

from typing import Any

from controller.cards import JOKER, UNKNOWN
from controller.events import HandEnded, HandRecord


def _hand_label(hand: Any) -> str:
    cards = "".join(repr(card) for card in hand.cards)
    return f"{hand.entry.label.value} ({cards})"


def _low_label(hand: Any) -> str:
    # pokerkit orders a low hand's cards as dealt; a floor reads lows highest card first.
    order = "A23456789TJQK"
    cards = sorted((repr(c) for c in hand.cards), key=lambda c: order.index(c[0]), reverse=True)
    return "-".join(c[0] for c in cards) + " low (" + "".join(cards) + ")"


def best_hands(game: str, hole: dict[int, list[str]], board: list[str]) -> dict[str, Any]:
    """Each seat's best high hand (and, in Omaha Hi/Lo, 8-or-better low) as display strings.

    A seat whose cards cannot make a hand yet (too few board cards, an unknown card) gets None.
    """
    import pokerkit

    result: dict[str, Any] = {}
    playable_board = [c for c in board if len(c) == 2 and c not in (JOKER, UNKNOWN)]
    board_text = "".join(playable_board)
    high_kind = pokerkit.StandardHighHand if game == "holdem" else pokerkit.OmahaHoldemHand
    for seat, cards in hole.items():
        entry: dict[str, Any] = {"high": None}
        if game == "omaha8":
            entry["low"] = None
        known = [c for c in cards if c not in (JOKER, UNKNOWN)]
        if len(known) != len(cards) or not known:
            result[str(seat)] = entry
            continue
        hole_text = "".join(known)
        try:
            entry["high"] = _hand_label(high_kind.from_game(hole_text, board_text))
        except ValueError:
            entry["high"] = None
        if game == "omaha8":
            try:
                low = pokerkit.OmahaEightOrBetterLowHand.from_game(hole_text, board_text)
            except ValueError:
                low = None
            entry["low"] = _low_label(low) if low is not None else None
        result[str(seat)] = entry
    return result


def hand_record(ended: HandEnded, game: str, seats: list[int], button: int,
                flop_resolved: bool, evaluate: bool = True) -> HandRecord:
    """The private hand record event built from a ``hand.ended`` event."""
    best = None
    if evaluate and ended.outcome == "complete" and flop_resolved:
        hole = {int(seat): cards for seat, cards in ended.hole.items()}
        best = best_hands(game, hole, ended.board)
    return HandRecord(hand=ended.hand, game=game, outcome=ended.outcome, seats=seats,
                      button=button, hole=ended.hole, board=ended.board, burns=ended.burns,
                      scrap=ended.scrap, out=ended.out, level=ended.level, best=best,
                      t=ended.t)
