"""A scripted dealer: the input lines a real dealer's shoe and button would produce.

It deals legal hands with a human rhythm, or hands with one injected irregularity, and then
does what the ruling on the display tells a dealer to do (replace the exposed card, scrap the
boxed card, put premature cards back and reshuffle, redeal after a misdeal...). It also keeps its
own account of where every card went, so tests can compare the core's hand records with it.

Used by the property tests, the replay benchmark and ``make demo``; later by the simulated table.
Pure: randomness comes from the ``random.Random`` passed in, time is the script's own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from controller.cards import HOLE_CARDS, JOKER, STANDARD_DECK, UNKNOWN
from controller.profiles import Profile
from controller.seating import Positions, initial_positions, next_positions, seat_newcomers

Line = dict[str, Any]


# Every irregularity the dealer can be told to commit, and the SPEC row it exercises.
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
        rng = self.rng
        exp.hole = {seat: [] for seat in self.positions.deal_order()}
        exp.board, exp.burns = [], []
        self.stub = [c for c in STANDARD_DECK]
        rng.shuffle(self.stub)
        self.t += rng.uniform(*self.between_hands)
        self._emit({"type": "deck_in", "deck": self.deck})
        order = self.positions.deal_order()
        slots = [seat for _ in range(HOLE_CARDS[self.game]) for seat in order]
        burn_for_flop: str | None = None
        replacements: list[int] = []

        face_up: set[int] = set()
        boxed_at: list[int] = []
        joker_at: int | None = None
        unknown_at: int | None = None
        skip_last = False
        if injection == "exposed_first":
            face_up = {0}
        elif injection == "exposed_second":
            face_up = {1}
        elif injection == "exposed_later":
            face_up = {rng.randrange(2, len(slots))}
        elif injection == "exposed_two":
            face_up = set(rng.sample(range(2, len(slots)), 2))
        elif injection == "boxed":
            boxed_at = [rng.randrange(len(slots))]
        elif injection == "boxed_two":
            boxed_at = sorted(rng.sample(range(len(slots)), 2))
        elif injection == "joker":
            joker_at = rng.randrange(len(slots))
        elif injection == "unknown_tag":
            unknown_at = rng.randrange(len(slots))
        elif injection == "missing_card":
            skip_last = True
        shoe_fault_at = rng.randrange(len(slots)) if injection == "shoe_fault" else None

        exposures = 0
        boxed_count = 0
        for i, seat in enumerate(slots):
            if skip_last and i == len(slots) - 1:
                break
            if i == shoe_fault_at:
                self.t += 0.5
                self._emit({"type": "shoe", "state": "lost"})
                self.t += rng.uniform(5.0, 60.0)
                self._emit({"type": "shoe", "state": "ok"})
            if i in boxed_at:
                self._draw_line(self._next_card(), "up", boxed=True)
                boxed_count += 1
                if boxed_count >= 2:
                    if self.profile.choice("boxed_two_cards") == "misdeal":
                        exp.rulings.append(("boxed_card", "misdeal"))
                        return "misdeal"
                    exp.rulings.append(("boxed_card", "scrap_and_replace"))
            if i == joker_at:
                self._draw_line(JOKER)
            if i == unknown_at:
                self._rhythm()
                self.tag_serial += 1
                self._emit({"type": "card", "tag": f"04FFEE{self.tag_serial:08X}"})
                exp.hole[seat].append(UNKNOWN)
                continue
            if i in face_up:
                card = self._deal("up")
                exposures += 1
                key = ("exposed_first_card" if i == 0 else
                       "exposed_second_card" if i == 1 else "exposed_later_card")
                if exposures >= 2 or self.profile.choice(key) == "misdeal":
                    if exposures >= 2:
                        exp.rulings.append(("exposed_card", "misdeal"))
                    return "misdeal"
                burn_for_flop = card
                replacements.append(seat)
                continue
            exp.hole[seat].append(self._deal())
        for seat in replacements:
            exp.hole[seat].append(self._deal())
        if burn_for_flop is not None:
            exp.burns.append(burn_for_flop)

        if injection in ("extra_card", "extra_two"):
            extra = self._deal()
            if injection == "extra_two":
                self._deal()
                if self.profile.choice("extra_hole_card") == "use_as_burn":
                    exp.rulings.append(("extra_card", "misdeal"))
                return "misdeal"
            if self.profile.choice("extra_hole_card") == "misdeal":
                return "misdeal"
            burn_for_flop = extra
            exp.burns.append(extra)

        ending = "showdown" if injection else rng.choice(
            ("showdown", "showdown", "showdown", "preflop", "flop", "turn"))
        # Preflop betting.
        if injection == "duplicate":
            self._pause()
            self._draw_line(self.rng.choice([c for cards in exp.hole.values() for c in cards
                                             if c != UNKNOWN]))
            return "void"
        if injection == "foreign":
            self._pause()
            other = self.decks[1] if self.deck == self.decks[0] else self.decks[0]
            self._draw_line(self.rng.choice(STANDARD_DECK), deck=other)
            return "void"
        flop_burn_needed = burn_for_flop is None
        if injection == "premature_flop":
            self._pause()
            drawn = [self._deal() for _ in range(4 if flop_burn_needed else 3)]
            if flop_burn_needed:
                exp.burns.append(drawn.pop(0))
                flop_burn_needed = False
            self._shuffle_in(drawn)
        if injection == "missing_card":
            self._tap()
            exp.rulings = [("missing_card", "call_floor")]
        else:
            self._tap()
        if ending == "preflop":
            return self._end_hand()

        # Flop.
        if flop_burn_needed and injection == "missing_burn":
            flop_burn_needed = False
        if flop_burn_needed:
            exp.burns.append(self._deal())
        flop = [self._deal() for _ in range(3)]
        turn_burn_needed = True
        river_burn_needed = True
        if injection == "fourth_flop":
            fourth = self._deal()
            if self.profile.choice("too_many_flop_cards") == "redeal_flop":
                self._shuffle_in([*flop, fourth])
                flop = [self._deal() for _ in range(3)]
            else:  # scramble: the floor picks one of the four at random as the next burn
                four = [*flop, fourth]
                burn = rng.choice(four)
                flop = [c for c in four if c != burn]
                exp.burns.append(burn)
                turn_burn_needed = False
                self.t += 15.0
                self._draw_line(burn)  # the dealer scans the chosen burn to record it
        exp.board.extend(flop)
        if injection == "premature_turn":
            self._pause()
            premature_burn = self._deal()
            exp.burns.append(premature_burn)
            turn_card = self._deal()
            if self.profile.choice("premature_turn") == "reshuffle_redeal":
                self._shuffle_in([turn_card])
                turn_burn_needed = False
                self._tap()
            else:  # set aside: burn and turn after betting, reshuffle it in before the river
                self._tap()
                if ending in ("flop",):
                    return self._end_hand()
                exp.burns.append(self._deal())
                exp.board.append(self._deal())
                self._tap()
                if ending == "turn":
                    return self._end_hand()
                self._shuffle_in([turn_card])
                exp.board.append(self._deal())
                self._tap()
                return self._end_hand()
        else:
            self._tap()
        if ending == "flop":
            return self._end_hand()

        # Turn.
        if turn_burn_needed:
            exp.burns.append(self._deal())
        exp.board.append(self._deal())
        if injection == "premature_river":
            self._pause()
            exp.burns.append(self._deal())
            self._shuffle_in([self._deal()])
            river_burn_needed = False
        self._tap()
        if ending == "turn":
            return self._end_hand()

        # River.
        if river_burn_needed:
            exp.burns.append(self._deal())
        exp.board.append(self._deal())
        self._tap()
        return self._end_hand()

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
) -> tuple[list[Line], list[Expected]]:
    """Lines and the dealer's own account; ``brisk``: short betting rounds (demos, tests).
    ``dealers`` sign in (a badge) in turn, one every ``dealer_every`` hands, as a room
    pushes its dealers."""
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
        if irregularity_rate > 0 and rng.random() < irregularity_rate:
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
