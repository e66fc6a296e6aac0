"""A scripted dealer: the input lines a real dealer's shoe and button would produce.

It deals legal hands with a human rhythm, or hands with one injected irregularity, and then
does what the ruling on the display tells a dealer to do (replace the exposed card, scrap the
boxed card, put premature cards back and reshuffle, redeal after a misdeal...). It also keeps its
own account of where every card went, so tests can compare the core's hand records with it.

Used by the property tests, the behaviour snapshot, the benchmarks, ``tablectl demo`` and the
simulated tables of ``tablectl sim`` (``make demo``).
Pure: randomness comes from the ``random.Random`` passed in, time is the script's own.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.cards import HOLE_CARDS, JOKER, STANDARD_DECK, UNKNOWN
from controller.profiles import Profile
from controller.seating import Positions, initial_positions, next_positions, seat_newcomers

Line = dict[str, Any]


# Every irregularity the dealer can be told to commit (how: STRATEGIES, at the end).
INJECTIONS = (
    "exposed_first", "exposed_second", "exposed_later", "exposed_two", "boxed", "boxed_two",
    "joker", "extra_card", "extra_two", "missing_card", "premature_flop", "premature_turn",
    "premature_river", "fourth_flop", "missing_burn", "duplicate", "foreign", "unknown_tag",
    "shoe_fault",
)


@dataclass
class Expected:
    """What the dealer knows happened in one hand (the final deal, after any redeals)."""

    number: int
    outcome: str = "complete"
    hole: dict[int, list[str]] = field(default_factory=dict)
    board: list[str] = field(default_factory=list)
    burns: list[str] = field(default_factory=list)
    rulings: list[tuple[str, str]] = field(default_factory=list)  # (kind, action) in order
    injected: str | None = None


def expected_ruling(profile: Profile, injection: str) -> tuple[str, str]:
    """The first (irregularity kind, ruling action) an injection must produce under a profile."""
    c = profile.choice
    return {
        "exposed_first": ("exposed_card", c("exposed_first_card")),
        "exposed_second": ("exposed_card", c("exposed_second_card")),
        "exposed_later": ("exposed_card", c("exposed_later_card")),
        "exposed_two": ("exposed_card", c("exposed_later_card")),
        "boxed": ("boxed_card", "scrap_and_replace"),
        "boxed_two": ("boxed_card", "scrap_and_replace"),
        "joker": ("joker", "scrap_and_replace"),
        "extra_card": ("extra_card", c("extra_hole_card")),
        "extra_two": ("extra_card", c("extra_hole_card")),
        "missing_card": ("missing_card", "call_floor"),
        "premature_flop": ("premature_card", c("premature_flop")),
        "premature_turn": ("premature_card", c("premature_turn")),
        "premature_river": ("premature_card", c("premature_river")),
        "fourth_flop": ("too_many_board_cards", c("too_many_flop_cards")),
        "missing_burn": ("missing_burn", c("missing_burn")),
        "duplicate": ("duplicate_card", "void_hand"),
        "foreign": ("foreign_card", "void_hand"),
        "unknown_tag": ("unknown_tag", "call_floor"),
        "shoe_fault": ("shoe_fault", "call_floor"),
    }[injection]


class ScriptedDealer:
    def __init__(
        self,
        rng: random.Random,
        profile: Profile,
        *,
        game: str = "holdem",
        seats: tuple[int, ...] = (1, 2, 3, 4, 5, 6),
        button: int | None = None,
        decks: tuple[str, str] = ("R1", "B2"),
        deal_gap: float = 3.0,
        t: float = 0.0,
        first_hand: int = 1,
        pauses: tuple[float, float] = (1.0, 30.0),
        between_hands: tuple[float, float] = (20.0, 60.0),
    ) -> None:
        self.rng = rng
        self.profile = profile
        self.game = game
        self.seats = tuple(sorted(seats))
        self.waiting: tuple[int, ...] = ()  # newcomers dealt around (the house's new_player)
        self.positions = initial_positions(self.seats, button if button is not None
                                           else self.seats[0])
        self.decks = decks
        self.deck_turn = 0
        self.deal_gap = deal_gap
        self.t = t
        self.number = first_hand
        self.lines: list[Line] = []
        self.stub: list[str] = []
        self.deck = decks[0]
        self.tag_serial = 0
        self.last_outcome: str | None = None
        self.pauses = pauses  # betting rounds: seconds beyond the dealing gap
        self.between_hands = between_hands  # gathering, shuffling, the deck going in

    # ------------------------------------------------------------------ helpers

    def setup_line(self) -> Line:
        return {"type": "setup", "game": self.game, "seats": list(self.seats),
                "button": self.positions.button, "hand": self.number}

    def _emit(self, line: Line) -> None:
        line["t"] = round(self.t, 3)
        self.lines.append(line)

    def _rhythm(self) -> None:
        self.t += self.rng.uniform(0.25, 0.7)

    def _pause(self) -> None:
        """A betting round or any other pause, always longer than the dealing gap."""
        self.t += self.deal_gap + self.rng.uniform(*self.pauses)

    def _draw_line(self, card: str, face: str = "down", boxed: bool = False,
                   deck: str | None = None) -> None:
        self._rhythm()
        line: Line = {"type": "card", "card": card}
        if deck is not None:
            line["deck"] = deck
        if face == "up":
            line["face"] = "up"
        if boxed:
            line["boxed"] = True
        self._emit(line)

    def _next_card(self) -> str:
        return self.stub.pop()

    def _deal(self, face: str = "down") -> str:
        card = self._next_card()
        self._draw_line(card, face)
        return card

    def _tap(self) -> None:
        self._pause()
        self._emit({"type": "button", "gesture": "tap"})

    def _shuffle_in(self, cards: list[str]) -> None:
        """Premature cards back into the stub, the stub reshuffled and put back in the shoe."""
        self.stub.extend(cards)
        self.rng.shuffle(self.stub)
        self.t += 2.0
        self._emit({"type": "deck_out"})
        self.t += 8.0
        self._emit({"type": "deck_in", "deck": self.deck})

    # ------------------------------------------------------------------ one hand

    def play_hand(self, injection: str | None = None) -> Expected:
        """Deal one hand (and its redeal, after a misdeal); return what really happened."""
        self.deck = self.decks[self.deck_turn % 2]
        self.deck_turn += 1
        self.positions = self._positions_for_hand()
        expected = Expected(self.number, injected=injection)
        self._declare_game()
        if injection is not None:
            expected.rulings.append(expected_ruling(self.profile, injection))
        outcome = self._one_deal(expected, injection)
        while outcome == "misdeal":
            # Button stays; same hand number; the dealer reshuffles and deals again, cleanly.
            outcome = self._one_deal(expected, None)
        expected.outcome = outcome
        self.last_outcome = outcome
        self.number += 1
        return expected

    def _declare_game(self) -> None:
        """Dealer's choice: tap between hands until the display shows the game to deal."""
        if self.profile.choice("game_declaration") != "dealer_declares":
            return
        from controller.table_parts import DECLARABLE_GAMES

        index = next(i for i, (game, _, _) in enumerate(DECLARABLE_GAMES) if game == self.game)
        # The first tap shows the first game; no tap at all leaves the default (the first).
        for _ in range(index + 1 if index else 0):
            self.t += 1.0
            self._emit({"type": "button", "gesture": "tap"})

    def _positions_for_hand(self) -> Positions:
        """Where the button is for the next hand, by the house's button rule, and who waits
        for the button to pass by its new-player rule."""
        previous, seats = self.positions, self.seats
        if self.last_outcome is None:
            return previous
        if self.last_outcome != "complete" and set(seats) == set(previous.seats) | set(
                self.waiting):
            return previous  # after a misdeal or a void hand the button stays
        positions, self.waiting = seat_newcomers(
            lambda playing: self._positions_among(previous, playing), seats, previous,
            self.profile.choice("new_player"))
        return positions

    def _positions_among(self, previous: Positions, seats: tuple[int, ...]) -> Positions:
        rule = self.profile.choice("button_movement")
        if self.last_outcome == "complete":
            return next_positions(previous, seats, rule)
        if previous.seats == seats:
            return previous
        if previous.button in seats:
            return initial_positions(seats, previous.button)
        return next_positions(previous, seats, rule)

    def change_seats(self, seats: tuple[int, ...]) -> None:
        """Players bust or arrive between hands."""
        self.seats = tuple(sorted(seats))
        self.t += 1.0
        self._emit({"type": "seats", "seats": list(self.seats)})

    def _one_deal(self, exp: Expected, injection: str | None) -> str:
        """One deal from the deck going in to the hand's end (or the misdeal or void that
        stops it): ``injection`` commits its irregularity at its point of the deal."""
        strategy = STRATEGIES[injection] if injection is not None else CLEAN
        rng = self.rng
        exp.hole = {seat: [] for seat in self.positions.deal_order()}
        exp.board, exp.burns = [], []
        self.stub = list(STANDARD_DECK)
        rng.shuffle(self.stub)
        self.t += rng.uniform(*self.between_hands)
        self._emit({"type": "deck_in", "deck": self.deck})
        order = self.positions.deal_order()
        deal = Deal(exp, [seat for _ in range(HOLE_CARDS[self.game]) for seat in order])
        plan = strategy.plan(rng, deal.slots)
        outcome = self._hole_cards(deal, plan)
        if outcome is None:
            outcome = strategy.extra_hole_cards(self, deal)
        if outcome is not None:
            return outcome
        deal.ending = "showdown" if injection else rng.choice(
            ("showdown", "showdown", "showdown", "preflop", "flop", "turn"))
        # Preflop betting.
        outcome = strategy.preflop_betting(self, deal)
        if outcome is not None:
            return outcome
        self._tap()
        strategy.preflop_closed(deal)
        if deal.ending == "preflop":
            return self._end_hand()
        # Flop.
        if deal.flop_burn_needed and strategy.burns_the_flop:
            exp.burns.append(self._deal())
        exp.board.extend(strategy.flop_dealt(self, deal, [self._deal() for _ in range(3)]))
        outcome = strategy.flop_betting(self, deal)
        if outcome is not None:
            return outcome
        if deal.ending == "flop":
            return self._end_hand()
        # Turn.
        if deal.turn_burn_needed:
            exp.burns.append(self._deal())
        exp.board.append(self._deal())
        strategy.turn_betting(self, deal)
        self._tap()
        if deal.ending == "turn":
            return self._end_hand()
        # River.
        if deal.river_burn_needed:
            exp.burns.append(self._deal())
        exp.board.append(self._deal())
        self._tap()
        return self._end_hand()

    def _hole_cards(self, deal: Deal, plan: HolePlan) -> str | None:
        """The hole cards, round by round, with the plan's faults; "misdeal" if they end the
        deal."""
        exp, rng = deal.exp, self.rng
        exposures = 0
        boxed_count = 0
        for i, seat in enumerate(deal.slots):
            if plan.skip_last and i == len(deal.slots) - 1:
                break
            if i == plan.shoe_fault_at:
                self.t += 0.5
                self._emit({"type": "shoe", "state": "lost"})
                self.t += rng.uniform(5.0, 60.0)
                self._emit({"type": "shoe", "state": "ok"})
            if i in plan.boxed_at:
                self._draw_line(self._next_card(), "up", boxed=True)
                boxed_count += 1
                if boxed_count >= 2:
                    if self.profile.choice("boxed_two_cards") == "misdeal":
                        exp.rulings.append(("boxed_card", "misdeal"))
                        return "misdeal"
                    exp.rulings.append(("boxed_card", "scrap_and_replace"))
            if i == plan.joker_at:
                self._draw_line(JOKER)
            if i == plan.unknown_at:
                self._rhythm()
                self.tag_serial += 1
                self._emit({"type": "card", "tag": f"04FFEE{self.tag_serial:08X}"})
                exp.hole[seat].append(UNKNOWN)
                continue
            if i in plan.face_up:
                card = self._deal("up")
                exposures += 1
                key = ("exposed_first_card" if i == 0 else
                       "exposed_second_card" if i == 1 else "exposed_later_card")
                if exposures >= 2 or self.profile.choice(key) == "misdeal":
                    if exposures >= 2:
                        exp.rulings.append(("exposed_card", "misdeal"))
                    return "misdeal"
                deal.burn_for_flop = card
                deal.replacements.append(seat)
                continue
            exp.hole[seat].append(self._deal())
        for seat in deal.replacements:
            exp.hole[seat].append(self._deal())
        if deal.burn_for_flop is not None:
            exp.burns.append(deal.burn_for_flop)
        return None

    def _end_hand(self) -> str:
        self.t += self.rng.uniform(2.0, 20.0)
        declares = self.profile.choice("game_declaration") == "dealer_declares"
        if declares or self.rng.random() < 0.8:
            self._emit({"type": "button", "gesture": "double_tap"})
        # else: the next deck going into the shoe ends the hand (under dealer's choice the
        # dealer ends it with the button, then taps through the games to declare the next)
        return "complete"

    def finish(self) -> None:
        """The session is over: end a hand still open."""
        self.t += 5.0
        self._emit({"type": "button", "gesture": "double_tap"})


def session_lines(
    rng: random.Random,
    profile: Profile,
    *,
    hands: int,
    game: str = "holdem",
    irregularity_rate: float = 0.0,
    clock: str | None = None,
    seats: tuple[int, ...] | None = None,
    injections: tuple[str, ...] = INJECTIONS,
    brisk: bool = False,
) -> list[Line]:
    """Input lines for a whole session; ``game='mixed'`` changes game between hands."""
    return session(rng, profile, hands=hands, game=game, irregularity_rate=irregularity_rate,
                   clock=clock, seats=seats, injections=injections, brisk=brisk)[0]


def session(
    rng: random.Random,
    profile: Profile,
    *,
    hands: int,
    game: str = "holdem",
    irregularity_rate: float = 0.0,
    clock: str | None = None,
    seats: tuple[int, ...] | None = None,
    injections: tuple[str, ...] = INJECTIONS,
    brisk: bool = False,
    seat_changes: bool = True,
    dealers: tuple[str, ...] = (),
    dealer_every: int = 4,
    plan: tuple[str | None, ...] | None = None,
) -> tuple[list[Line], list[Expected]]:
    """Lines and the dealer's own account; ``brisk``: short betting rounds (demos, tests).
    ``dealers`` sign in (a badge) in turn, one every ``dealer_every`` hands, as a room
    pushes its dealers. ``plan``: the injection of each hand in turn (None: a clean hand),
    instead of drawing them at ``irregularity_rate``."""
    if seats is None:
        count = rng.randint(2, 10)
        seats = tuple(sorted(rng.sample(range(1, 11), count)))
    first_game = rng.choice(("holdem", "omaha", "omaha8")) if game == "mixed" else game
    dealer = ScriptedDealer(rng, profile, game=first_game, seats=seats,
                            button=rng.choice(seats),
                            pauses=(1.0, 4.0) if brisk else (1.0, 30.0),
                            between_hands=(4.0, 8.0) if brisk else (20.0, 60.0))
    lines: list[Line] = [dealer.setup_line()]
    if clock is not None:
        lines.append({"type": "clock", "structure": clock, "t": 0.0})
    expected: list[Expected] = []
    for number in range(hands):
        if dealers and number % max(1, dealer_every) == 0:
            dealer.t += 1.0
            dealer._emit({"type": "dealer",
                          "dealer": dealers[number // max(1, dealer_every) % len(dealers)]})
        injection = None
        if plan is not None:
            injection = plan[number] if number < len(plan) else None
        elif irregularity_rate > 0 and rng.random() < irregularity_rate:
            injection = rng.choice(injections)
        expected.append(dealer.play_hand(injection))
        if game == "mixed":
            dealer.game = rng.choice(("holdem", "omaha", "omaha8"))
            dealer.t += 1.0
            dealer._emit({"type": "setup", "game": dealer.game})
        if seat_changes and rng.random() < 0.08:
            current = list(dealer.seats)
            free = [s for s in range(1, 11) if s not in current]
            if len(current) > 2 and (not free or rng.random() < 0.7):
                current.remove(rng.choice(current))
            elif free:
                current.append(rng.choice(free))
            dealer.change_seats(tuple(current))
    dealer.finish()
    lines.extend(dealer.lines)
    return lines, expected


# ---------------------------------------------------------------------------- injections

@dataclass
class HolePlan:
    """Where, in the hole cards' slots, the dealer goes wrong."""

    face_up: set[int] = field(default_factory=set)
    boxed_at: list[int] = field(default_factory=list)
    joker_at: int | None = None
    unknown_at: int | None = None
    skip_last: bool = False
    shoe_fault_at: int | None = None


@dataclass
class Deal:
    """One deal in progress: what the dealer knows, and what the rest of it needs."""

    exp: Expected
    slots: list[int]
    burn_for_flop: str | None = None  # an exposed or extra hole card that became the burn
    replacements: list[int] = field(default_factory=list)
    ending: str = "showdown"  # where a clean hand ends: preflop, flop, turn or showdown
    turn_burn_needed: bool = True
    river_burn_needed: bool = True
    flop_burn_taken: bool = False  # a premature flop's first card became the burn

    @property
    def flop_burn_needed(self) -> bool:
        return self.burn_for_flop is None and not self.flop_burn_taken


class Strategy:
    """A deal's points where an injected irregularity happens; each hook deals cleanly unless
    an injection overrides it. A hook that returns an outcome ends the deal with it."""

    burns_the_flop = True

    def plan(self, rng: random.Random, slots: list[int]) -> HolePlan:
        return HolePlan()

    def extra_hole_cards(self, dealer: ScriptedDealer, deal: Deal) -> str | None:
        return None

    def preflop_betting(self, dealer: ScriptedDealer, deal: Deal) -> str | None:
        return None

    def preflop_closed(self, deal: Deal) -> None:
        pass

    def flop_dealt(self, dealer: ScriptedDealer, deal: Deal, flop: list[str]) -> list[str]:
        return flop

    def flop_betting(self, dealer: ScriptedDealer, deal: Deal) -> str | None:
        dealer._tap()
        return None

    def turn_betting(self, dealer: ScriptedDealer, deal: Deal) -> None:
        pass


class _FaceUp(Strategy):
    def __init__(self, pick: Callable[[random.Random, list[int]], set[int]]) -> None:
        self.pick = pick

    def plan(self, rng: random.Random, slots: list[int]) -> HolePlan:
        return HolePlan(face_up=self.pick(rng, slots))


class _Boxed(Strategy):
    def __init__(self, count: int) -> None:
        self.count = count

    def plan(self, rng: random.Random, slots: list[int]) -> HolePlan:
        if self.count == 1:
            return HolePlan(boxed_at=[rng.randrange(len(slots))])
        return HolePlan(boxed_at=sorted(rng.sample(range(len(slots)), self.count)))


class _Joker(Strategy):
    def plan(self, rng: random.Random, slots: list[int]) -> HolePlan:
        return HolePlan(joker_at=rng.randrange(len(slots)))


class _UnknownTag(Strategy):
    def plan(self, rng: random.Random, slots: list[int]) -> HolePlan:
        return HolePlan(unknown_at=rng.randrange(len(slots)))


class _ShoeFault(Strategy):
    """The shoe's link drops while the hole cards are dealt, and comes back."""

    def plan(self, rng: random.Random, slots: list[int]) -> HolePlan:
        return HolePlan(shoe_fault_at=rng.randrange(len(slots)))


class _MissingCard(Strategy):
    """The last hole card never comes out; the dealer closes the betting anyway."""

    def plan(self, rng: random.Random, slots: list[int]) -> HolePlan:
        return HolePlan(skip_last=True)

    def preflop_closed(self, deal: Deal) -> None:
        deal.exp.rulings = [("missing_card", "call_floor")]


class _ExtraCards(Strategy):
    def __init__(self, count: int) -> None:
        self.count = count

    def extra_hole_cards(self, dealer: ScriptedDealer, deal: Deal) -> str | None:
        extra = dealer._deal()
        action = dealer.profile.choice("extra_hole_card")
        if self.count == 2:  # two extra cards are a misdeal whatever the house does with one
            dealer._deal()
            if action == "use_as_burn":
                deal.exp.rulings.append(("extra_card", "misdeal"))
            return "misdeal"
        if action == "misdeal":
            return "misdeal"
        deal.burn_for_flop = extra
        deal.exp.burns.append(extra)
        return None


class _Duplicate(Strategy):
    """One of the hole cards comes out of the shoe again: the deck is fouled."""

    def preflop_betting(self, dealer: ScriptedDealer, deal: Deal) -> str | None:
        dealer._pause()
        dealer._draw_line(dealer.rng.choice([c for cards in deal.exp.hole.values()
                                             for c in cards if c != UNKNOWN]))
        return "void"


class _Foreign(Strategy):
    """A card of the other deck comes out."""

    def preflop_betting(self, dealer: ScriptedDealer, deal: Deal) -> str | None:
        dealer._pause()
        other = dealer.decks[1] if dealer.deck == dealer.decks[0] else dealer.decks[0]
        dealer._draw_line(dealer.rng.choice(STANDARD_DECK), deck=other)
        return "void"


class _PrematureFlop(Strategy):
    def preflop_betting(self, dealer: ScriptedDealer, deal: Deal) -> str | None:
        dealer._pause()
        burn_first = deal.flop_burn_needed
        drawn = [dealer._deal() for _ in range(4 if burn_first else 3)]
        if burn_first:
            deal.exp.burns.append(drawn.pop(0))
            deal.flop_burn_taken = True
        dealer._shuffle_in(drawn)
        return None


class _MissingBurn(Strategy):
    burns_the_flop = False


class _FourthFlop(Strategy):
    def flop_dealt(self, dealer: ScriptedDealer, deal: Deal, flop: list[str]) -> list[str]:
        fourth = dealer._deal()
        if dealer.profile.choice("too_many_flop_cards") == "redeal_flop":
            dealer._shuffle_in([*flop, fourth])
            return [dealer._deal() for _ in range(3)]
        # scramble: the floor picks one of the four at random as the next burn
        four = [*flop, fourth]
        burn = dealer.rng.choice(four)
        deal.exp.burns.append(burn)
        deal.turn_burn_needed = False
        dealer.t += 15.0
        dealer._draw_line(burn)  # the dealer scans the chosen burn to record it
        return [c for c in four if c != burn]


class _PrematureTurn(Strategy):
    def flop_betting(self, dealer: ScriptedDealer, deal: Deal) -> str | None:
        exp = deal.exp
        dealer._pause()
        exp.burns.append(dealer._deal())
        turn_card = dealer._deal()
        if dealer.profile.choice("premature_turn") == "reshuffle_redeal":
            dealer._shuffle_in([turn_card])
            deal.turn_burn_needed = False
            dealer._tap()
            return None
        # set aside: burn and turn after betting, reshuffle it in before the river
        dealer._tap()
        if deal.ending == "flop":
            return dealer._end_hand()
        exp.burns.append(dealer._deal())
        exp.board.append(dealer._deal())
        dealer._tap()
        if deal.ending == "turn":
            return dealer._end_hand()
        dealer._shuffle_in([turn_card])
        exp.board.append(dealer._deal())
        dealer._tap()
        return dealer._end_hand()


class _PrematureRiver(Strategy):
    def turn_betting(self, dealer: ScriptedDealer, deal: Deal) -> None:
        dealer._pause()
        deal.exp.burns.append(dealer._deal())
        dealer._shuffle_in([dealer._deal()])
        deal.river_burn_needed = False


CLEAN = Strategy()
# Every irregularity the dealer can be told to commit, and how.
STRATEGIES: dict[str, Strategy] = {
    "exposed_first": _FaceUp(lambda rng, slots: {0}),
    "exposed_second": _FaceUp(lambda rng, slots: {1}),
    "exposed_later": _FaceUp(lambda rng, slots: {rng.randrange(2, len(slots))}),
    "exposed_two": _FaceUp(lambda rng, slots: set(rng.sample(range(2, len(slots)), 2))),
    "boxed": _Boxed(1),
    "boxed_two": _Boxed(2),
    "joker": _Joker(),
    "extra_card": _ExtraCards(1),
    "extra_two": _ExtraCards(2),
    "missing_card": _MissingCard(),
    "premature_flop": _PrematureFlop(),
    "premature_turn": _PrematureTurn(),
    "premature_river": _PrematureRiver(),
    "fourth_flop": _FourthFlop(),
    "missing_burn": _MissingBurn(),
    "duplicate": _Duplicate(),
    "foreign": _Foreign(),
    "unknown_tag": _UnknownTag(),
    "shoe_fault": _ShoeFault(),
}
assert tuple(STRATEGIES) == INJECTIONS
