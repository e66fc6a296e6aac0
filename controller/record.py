"""The hand record: every seat's cards, the board, and each seat's best hand, via pokerkit.

Evaluation runs once at the end of a hand, never on the per-card path. The record is private
data (hole cards): it goes on the ``private`` topic only. Pure computation: pokerkit is a pure
library and is imported on first use.
"""

from __future__ import annotations

from typing import Any

from controller.cards import JOKER, UNKNOWN
from controller.events import HandEnded, HandRecord

RANK_NAMES = {"A": "ace", "K": "king", "Q": "queen", "J": "jack", "T": "ten", "9": "nine",
              "8": "eight", "7": "seven", "6": "six", "5": "five", "4": "four", "3": "three",
              "2": "two"}
HIGH_ORDER = "23456789TJQKA"


def _plural(rank: str) -> str:
    name = RANK_NAMES[rank]
    return name + ("es" if name.endswith("x") else "s")


def hand_name(label: str, cards: list[str]) -> str:
    """A made high hand as a floor person says it: "pair of kings", "kings full of eights",
    "straight, five high" (pokerkit names the category; the ranks say which one)."""
    ranks = sorted((c[0] for c in cards), key=HIGH_ORDER.index, reverse=True)
    by_count = sorted(set(ranks), key=lambda r: (ranks.count(r), HIGH_ORDER.index(r)),
                      reverse=True)  # the rank held most first, then the higher
    top = by_count[0]
    wheel = set(ranks) == set("A2345")
    straight_top = "5" if wheel else ranks[0]
    match label:
        case "High card":
            return f"{RANK_NAMES[ranks[0]]} high"
        case "One pair":
            return f"pair of {_plural(top)}"
        case "Two pair":
            return f"two pair, {_plural(by_count[0])} and {_plural(by_count[1])}"
        case "Three of a kind":
            return f"three {_plural(top)}"
        case "Straight":
            return f"straight, {RANK_NAMES[straight_top]} high"
        case "Flush":
            return f"flush, {RANK_NAMES[ranks[0]]} high"
        case "Full house":
            return f"full house, {_plural(by_count[0])} full of {_plural(by_count[1])}"
        case "Four of a kind":
            return f"four {_plural(top)}"
        case "Straight flush":
            return "royal flush" if straight_top == "A" else (
                f"straight flush, {RANK_NAMES[straight_top]} high")
    return label.lower()


def _hand_label(hand: Any) -> str:
    cards = "".join(repr(card) for card in hand.cards)
    return f"{hand.entry.label.value} ({cards})"


def _as_read(cards: list[str]) -> list[str]:
    """Five cards in the order a floor reads them: the rank held most first, then higher
    ranks; a wheel's ace last."""
    ranks = [c[0] for c in cards]
    if set(ranks) == set("A2345"):
        return sorted(cards, key=lambda c: "A2345".index(c[0]), reverse=True)
    return sorted(cards, key=lambda c: (ranks.count(c[0]), HIGH_ORDER.index(c[0])),
                  reverse=True)


def _high_entry(hand: Any) -> dict[str, Any]:
    cards = _as_read([repr(card) for card in hand.cards])
    return {"high": _hand_label(hand), "high_name": hand_name(hand.entry.label.value, cards),
            "high_cards": cards}


def _low_label(hand: Any) -> str:
    # pokerkit orders a low hand's cards as dealt; a floor reads lows highest card first.
    order = "A23456789TJQK"
    cards = sorted((repr(c) for c in hand.cards), key=lambda c: order.index(c[0]), reverse=True)
    return "-".join(c[0] for c in cards) + " low (" + "".join(cards) + ")"


def best_hands(game: str, hole: dict[int, list[str]], board: list[str]) -> dict[str, Any]:
    """Each seat's best high hand (and, in Omaha Hi/Lo, 8-or-better low) as display strings:
    ``high`` as pokerkit labels it, ``high_name`` in words, ``high_cards`` its five cards.

    A seat whose cards cannot make a hand yet (too few board cards, an unknown card) gets None.
    """
    return _evaluate(game, hole, board)[0]


def _evaluate(game: str, hole: dict[int, list[str]],
              board: list[str]) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """The seats' best hands and the seats holding the best of them (high; low in Hi/Lo)."""
    import pokerkit

    result: dict[str, Any] = {}
    made: dict[str, dict[int, Any]] = {"high": {}, "low": {}}
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
            high = high_kind.from_game(hole_text, board_text)
        except ValueError:
            pass
        else:
            entry.update(_high_entry(high))
            made["high"][seat] = high
        if game == "omaha8":
            try:
                low = pokerkit.OmahaEightOrBetterLowHand.from_game(hole_text, board_text)
            except ValueError:
                low = None
            if low is not None:
                entry["low"] = _low_label(low)
                entry["low_name"] = _low_label(low).split(" (")[0]
                entry["low_cards"] = [repr(c) for c in low.cards]
                made["low"][seat] = low
            else:
                entry["low"] = None
        result[str(seat)] = entry
    # pokerkit orders hands so that the stronger compares greater, lows included.
    best = {side: sorted(s for s, h in hands.items() if h == max(hands.values()))
            for side, hands in made.items() if hands}
    return result, best


def hand_record(ended: HandEnded, game: str, seats: list[int], button: int,
                flop_resolved: bool, evaluate: bool = True) -> HandRecord:
    """The private hand record event built from a ``hand.ended`` event."""
    best = best_hand = None
    if evaluate and ended.outcome == "complete" and flop_resolved:
        hole = {int(seat): cards for seat, cards in ended.hole.items()}
        best, best_hand = _evaluate(game, hole, ended.board)
    return HandRecord(hand=ended.hand, game=game, outcome=ended.outcome, seats=seats,
                      button=button, hole=ended.hole, board=ended.board, burns=ended.burns,
                      scrap=ended.scrap, out=ended.out, level=ended.level, best=best,
                      best_hand=best_hand or None, t=ended.t)
