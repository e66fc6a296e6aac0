"""The broadcast feed's view of a deal: each seat's player, hole cards and how sure the table
is of them, the board, the outcome, from the private events the recorder stored (the shoe
reads each card as drawn; the core gives it to a seat by the deal order and corrects itself
on exposed, boxed and misdealt cards). Pure: events in, a view out; what may be shown, and
when, is ``hub/broadcast_feed.py``'s.

Never a wrong card shown as certain: a seat's cards are ``dealt`` (read and given by the deal
order, nothing irregular about them), ``corrected`` (the core gave the seat other cards than
the order alone would have: an exposed card replaced, a boxed card or joker scrapped, the
hand's end disagreeing), ``uncertain`` (a card missing, unreadable, a shoe fault before the
deal was done, a foreign or duplicate card, a deal that broke the declared game) or ``void``
(a misdeal or a void hand: redealt or bets returned); ``why`` says each reason in words, as
the hand history's irregularities and rulings do. The board has its own status and reasons.

Each live seat's equity (``controller/equity.py``) at the street the board is at: the live
seats are those dealt and not folded (the operator's taps); a hand any of whose live seats'
cards are not all known for certain (``dealt`` or ``corrected``) shows none, and says why.
Pre-flop the sample is drawn with a generator seeded by the deal, the board and the live
seats: the same feed, the same figures.
"""

from __future__ import annotations

import dataclasses
import random
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from contract.envelope import event_of
from controller.cards import HOLE_CARDS
from controller.equity import equities

STATUSES = ("dealt", "corrected", "uncertain", "void")
UNKNOWN_CARD = "??"  # the core's card for a tag that maps to none
TOO_MANY = "too many flop cards: the floor rules on them"


@dataclass
class _Marked:
    reasons: dict[str, str] = field(default_factory=dict)  # why -> the status it gives

    def mark(self, status: str, why: str) -> None:
        if STATUSES.index(status) > STATUSES.index(self.reasons.get(why, "dealt")):
            self.reasons[why] = status

    def settled(self, why: str, instead: str) -> None:
        """A reason the floor's ruling settled: it gives way to what was done."""
        if self.reasons.pop(why, None) is not None:
            self.mark("corrected", instead)

    @property
    def status(self) -> str:
        return max(self.reasons.values(), key=STATUSES.index, default="dealt")

    @property
    def why(self) -> list[str]:
        return list(self.reasons)


@dataclass
class _Seat(_Marked):
    cards: list[str | None] = field(default_factory=list)


def _card(card: Any) -> str | None:
    return None if card in (None, UNKNOWN_CARD) else str(card)


def deal_id(incarnation: str, seq: int) -> str:
    """A deal's name in the feed: its start's event (the table's incarnation and seq)."""
    return f"{incarnation}:{seq}"


class _Deal:
    """A deal's view, built event by event."""

    def __init__(self, started: dict[str, Any]) -> None:
        event = event_of(started)
        self.incarnation, self.seq = str(started["incarnation"]), int(started["seq"])
        self.id = deal_id(self.incarnation, self.seq)
        self.hand = int(started["hand"])
        self.redeal = int(event.get("redeal") or 0)
        self.game = event.get("game")
        self.button = event.get("button")
        self.started_at = int(started["ts"])
        # The level and its blinds the table dealt it at (the venue clock's, with a clock).
        self.level: int | None = event.get("level")
        self.blinds: dict[str, int] | None = event.get("blinds")
        self.seats = {int(s): _Seat() for s in event.get("seats") or ()}
        self.board: list[str | None] = []
        self.board_mark = _Marked()
        self.notes: list[dict[str, Any]] = []
        self.outcome: str | None = None
        self.ended_at: int | None = None
        self.showdown: dict[str, Any] | None = None
        self.dead: list[str] = []  # cards out of play the table knows: burns, scrap, out
        self.scrapped: str | None = None  # why the next hole card is the one it is
        self.past_the_deal = False  # a burn or board card drawn: the hole cards are all out

    def _everyone(self, status: str, why: str) -> None:
        for seat in self.seats.values():
            seat.mark(status, why)

    def _seat(self, number: Any) -> _Seat | None:
        return self.seats.get(int(number)) if isinstance(number, int) else None

    def apply(self, stored: dict[str, Any]) -> None:
        event = event_of(stored)
        kind = event["type"]
        if kind == "hand.level":  # the level changed before the hand's first card
            self.level, self.blinds = event.get("level"), event.get("blinds")
        if kind == "card":
            self._on_card(event)
        elif kind == "irregularity":
            self._on_irregularity(event)
        elif kind == "ruling":
            self._on_ruling(event)
        elif kind == "board.resolved":
            self.board = [_card(c) for c in event.get("board") or ()]
            self.board_mark.settled(TOO_MANY, "the floor picked the flop's burn from four "
                                              "cards")
        elif kind == "hand.ended":
            self._on_end(event, int(stored["ts"]))
        elif kind == "hand.record":
            self.showdown = {"best": event.get("best"), "best_hand": event.get("best_hand")}

    def _on_card(self, event: dict[str, Any]) -> None:
        role, card = event.get("role"), _card(event.get("card"))
        if role == "hole":
            seat = self._seat(event.get("seat"))
            if seat is None:
                return
            seat.cards.append(card)
            if card is None:
                seat.mark("uncertain", "a card the shoe could not read (unknown tag)")
            if event.get("replacement"):
                seat.mark("corrected", f"{card} replaces it: the first card after the deal")
            if self.scrapped is not None:
                seat.mark("corrected", self.scrapped)
                self.scrapped = None
        if role in ("burn", "scrap", "out") and card is not None:
            self.dead.append(card)
        if role == "burn" and event.get("dealt_to") is not None:
            seat = self._seat(event.get("dealt_to"))
            if seat is not None:
                seat.mark("corrected", f"{card} dealt to it face up: the flop's burn now")
        elif role in ("burn", "board"):
            self.past_the_deal = True
            if role == "board":
                self.board.append(card)
        elif role == "out" and event.get("premature"):
            self.board_mark.mark("corrected", f"{card} drawn before the betting closed: set "
                                              "aside")

    def _on_irregularity(self, event: dict[str, Any]) -> None:
        kind, card = event.get("kind"), event.get("card")
        note: dict[str, Any] = {"kind": kind}
        if card is not None:
            note["card"] = card
        for key in ("seat", "street", "missing", "state", "part"):
            if event.get(key) is not None:
                note[key] = event[key]
        self.notes.append(note)
        seat = self._seat(event.get("seat"))
        if kind == "exposed_card" and seat is not None and not any(
                "face up" in why for why in seat.why):  # a replaced card said so already
            seat.mark("corrected", f"{card} exposed in the deal")
        elif kind in ("boxed_card", "joker"):
            what = "a joker" if kind == "joker" else f"{card} boxed (face up in the deck)"
            if self.past_the_deal:
                self.board_mark.mark("corrected", f"{what}: scrapped and replaced")
            else:
                self.scrapped = f"{what} scrapped: the seat's card is the one after it"
        elif kind == "missing_card":
            missing = event.get("missing")
            if isinstance(missing, dict):
                for number, count in missing.items():
                    short = self.seats.get(int(number))
                    if short is not None:
                        short.mark("uncertain", f"{count} card(s) missing: the shoe did not "
                                                "read them")
            else:
                self.board_mark.mark("uncertain", f"{missing} board card(s) missing")
        elif kind in ("premature_card", "missing_burn"):
            self.board_mark.mark("corrected", "a premature card set aside" if kind ==
                                 "premature_card" else "a street dealt without its burn")
        elif kind == "too_many_board_cards":
            self.board_mark.mark("uncertain", TOO_MANY)
        elif kind == "unknown_tag":
            why = "a card the shoe could not read (unknown tag)"
            if seat is not None:
                seat.mark("uncertain", why)
            elif not self.past_the_deal:
                self._everyone("uncertain", why + " in the deal: the order may be off")
            else:
                self.board_mark.mark("uncertain", why)
        elif kind == "shoe_fault":
            why = f"the shoe's {event.get('part') or 'link'} failed mid-hand " \
                  f"({event.get('state')}): cards may be missing"
            if not self.past_the_deal:
                self._everyone("uncertain", why)
            self.board_mark.mark("uncertain", why)
        elif kind in ("foreign_card", "duplicate_card"):
            why = (f"{card} is another deck's card" if kind == "foreign_card"
                   else f"{card} drawn twice: the deck is suspect")
            self._everyone("uncertain", why)
            self.board_mark.mark("uncertain", why)
        elif kind == "wrong_game":
            self._everyone("uncertain", f"the deal broke the game declared "
                                        f"({event.get('declared')})")
        elif kind == "extra_card":
            self.notes[-1]["why"] = "a hole card past the deal, out of the deal order"

    def _on_ruling(self, event: dict[str, Any]) -> None:
        ruling = {"action": event.get("action"), "text": event.get("text")}
        if event.get("action") == "redeal_flop":
            self.board = [c for c in self.board if c not in (event.get("returned") or ())]
            self.board_mark.settled(TOO_MANY, "the flop dealt again (too many cards)")
        if self.notes and "ruling" not in self.notes[-1]:
            self.notes[-1]["ruling"] = ruling
        else:
            self.notes.append({"kind": None, "ruling": ruling})

    def _on_end(self, event: dict[str, Any], ts: int) -> None:
        self.outcome = str(event.get("outcome"))
        self.ended_at = ts
        for number, cards in (event.get("hole") or {}).items():
            seat = self.seats.get(int(number))
            if seat is None:
                continue
            final = [_card(c) for c in cards]
            if final != seat.cards:
                seat.mark("corrected", "the hand's end gives the seat other cards")
                seat.cards = final
            if None in final:
                seat.mark("uncertain", "a card the shoe could not read (unknown tag)")
        self.board = [_card(c) for c in event.get("board") or ()]
        if self.outcome == "misdeal":
            self._everyone("void", "misdeal: reshuffled and dealt again")
        elif self.outcome == "void":
            self._everyone("void", "void hand: bets returned")

    def equity(self, folds: dict[int, bool]) -> tuple[dict[int, dict[str, Any]],
                                                      dict[str, Any] | None, str | None]:
        """Each live seat's equity, the hand's (street, exact, runouts, error), or why none."""
        if self.game not in HOLE_CARDS:
            return {}, None, f"no equities for {self.game}"
        if self.outcome in ("misdeal", "void"):
            return {}, None, f"a {self.outcome}"
        live = {number: seat for number, seat in self.seats.items() if not folds.get(number)}
        if len(live) < 2:
            return {}, None, "fewer than two seats live"
        if any(seat.status not in ("dealt", "corrected") or None in seat.cards
               or len(seat.cards) != HOLE_CARDS[self.game] for seat in live.values()):
            return {}, None, "a live seat's cards are not all known"
        board = [c for c in self.board if c is not None]
        if len(board) != len(self.board) or self.board_mark.status == "uncertain":
            return {}, None, "the board is not known for certain"
        street = max(n for n in (0, 3, 4, 5) if n <= len(board))
        dead = [c for c in self.dead if c not in board]
        for number, seat in self.seats.items():
            if number not in live:
                dead += [c for c in seat.cards if c is not None]
        hole = tuple(sorted((number, tuple(str(c) for c in seat.cards))
                            for number, seat in live.items()))
        try:
            found = _equities(str(self.game), hole, tuple(board[:street]),
                              tuple(sorted(set(dead))), zlib.crc32(
                                  f"{self.id}|{board[:street]}|{sorted(live)}".encode()))
        except ValueError as exc:  # a card twice: the deck is suspect
            return {}, None, str(exc)
        seats = {s.seat: {k: v for k, v in dataclasses.asdict(s).items()
                          if k != "seat" and v is not None} for s in found.seats}
        hand = {"street": str(found.street), "exact": found.exact, "runouts": found.runouts,
                "std_error": found.std_error}
        if found.no_low is not None:
            hand["no_low"] = found.no_low
        return seats, hand, None

    def view(self, names: dict[str, str], folds: dict[int, bool], *,
             with_equity: bool = True) -> dict[str, Any]:
        by_seat, equity, no_equity = self.equity(folds) if with_equity else ({}, None, None)
        return {
            "deal": self.id, "hand": self.hand, "redeal": self.redeal, "game": self.game,
            "button": self.button, "started_at": self.started_at, "ended_at": self.ended_at,
            "outcome": self.outcome, "level": self.level, "blinds": self.blinds,
            "seats": [{"seat": number, "player": names.get(str(number)), "cards": seat.cards,
                       "status": seat.status, "why": seat.why,
                       "folded": folds.get(number, False), "equity": by_seat.get(number)}
                      for number, seat in sorted(self.seats.items())],
            "board": self.board, "board_status": self.board_mark.status,
            "board_why": self.board_mark.why, "irregularities": self.notes,
            "showdown": self.showdown, "equity": equity, "equity_why": no_equity,
        }


@lru_cache(maxsize=512)
def _equities(game: str, hole: tuple[tuple[int, tuple[str, ...]], ...], board: tuple[str, ...],
              dead: tuple[str, ...], seed: int) -> Any:
    """controller/equity.py's, kept for a feed asked for again (pre-flop takes tens of ms)."""
    return equities(game, dict(hole), board, dead, random.Random(seed))


def deals(envelopes: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, _Deal]]:
    """The deals the envelopes (journal order, envelope; oldest first) hold, each with its
    journal's order: events before the first deal's start (a deal cut by the window) are
    left out."""
    found: list[tuple[int, _Deal]] = []
    current: _Deal | None = None
    current_key: tuple[int, str] | None = None
    for epoch, stored in envelopes:
        key = (epoch, str(stored.get("incarnation")))
        if stored.get("type") == "hand.started":
            current, current_key = _Deal(stored), key
            found.append((epoch, current))
        elif current is not None and key == current_key and stored.get("hand") == current.hand:
            current.apply(stored)
    return found


def hands(built: list[tuple[int, _Deal]], names: dict[str, dict[str, str]],
          folds: dict[str, dict[int, bool]]) -> list[dict[str, Any]]:
    """Hand by hand, oldest first: a hand is its last deal, the deals a misdeal voided before
    it (``voided``) listed with it, so that a redealt hand replaces the voided one."""
    grouped: dict[tuple[int, int], list[_Deal]] = {}
    for epoch, deal in built:
        grouped.setdefault((epoch, deal.hand), []).append(deal)
    out = []
    for key in sorted(grouped):
        *voided, last = grouped[key]
        shown = last.view(names.get(last.id, {}), folds.get(last.id, {}))
        shown["voided"] = [deal.view(names.get(deal.id, {}), folds.get(deal.id, {}))
                           for deal in voided]
        out.append(shown)
    return out
