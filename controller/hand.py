"""One hand at the table: which card went where, every irregularity and the ruling it gets.

A ``Hand`` is fed cards drawn from the shoe and the dealer's taps, each with its time in seconds,
and answers with events (``controller.events``). It never reads a clock
and does no I/O: the table core (``controller.table``) owns it.

Its phase (``Phase``) moves only along ``TRANSITIONS``; anything else raises ``HandStateError``.
The phase says what a card drawn now is: a sub-phase (a seat owed a replacement, cards dealt
early, an overdealt flop) is a phase of its own, not a flag. What outlasts the phases is data:
a scrambled flop waiting for the floor's pick of the burn (``scramble``) and a reshuffle due
(``reshuffle_pending``: the same deck out and in again goes on with the hand), the counts of
exposed, boxed and extra cards, and what each street still needs.
Every irregularity goes through ``_irregular``: the card's event, the irregularity, the ruling
and, when the ruling ends the hand, its end.

The model of a deal (SPEC section 2):

- hole cards go one at a time clockwise from left of the button, one round per card;
- each street is ``burn + cards`` (flop 3, turn 1, river 1), dealt after the dealer's tap closes
  the previous betting round;
- cards drawn in quick succession belong to one dealing action; once the last expected card of
  an action is out, a card within ``deal_gap`` seconds is still part of it (an extra hole card, a
  fourth flop card), a card after a longer gap is a new action (premature, betting being open).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from controller import profiles as rules
from controller.cards import HOLE_CARDS, JOKER, UNKNOWN
from controller.events import (
    BoardResolved,
    Card,
    CardRole,
    Event,
    Face,
    HandEnded,
    HandStarted,
    Irregularity,
    IrregularityKind,
    Ruling,
    RulingAction,
    RulingReason,
    ShoeState,
    Street,
)
from controller.profiles import ChoiceRule, Profile
from controller.seating import Positions

STREETS = (Street.FLOP, Street.TURN, Street.RIVER)  # the streets dealt after the hole cards
BOARD_COUNT = {Street.FLOP: 3, Street.TURN: 1, Street.RIVER: 1}
NEXT_STREET: dict[Street, Street | None] = {
    Street.PREFLOP: Street.FLOP, Street.FLOP: Street.TURN, Street.TURN: Street.RIVER,
    Street.RIVER: None}

ORDINAL = {0: "1st", 1: "2nd"}
# The house's rule on a card of the street dealt while the betting before it was open.
PREMATURE = {Street.FLOP: rules.PREMATURE_FLOP, Street.TURN: rules.PREMATURE_TURN,
             Street.RIVER: rules.PREMATURE_RIVER}


class Phase(StrEnum):
    """Where a hand is (h11's ``_state.py`` is the model: an enum and a transition table).

    Four are sub-phases, each of the phase it shows as (``SHOWN_AS``, what the table's state
    says): they say what the next card belongs to, where the dealing rhythm (``deal_gap``)
    decides between the deal going on and an irregularity."""

    HOLE = "hole"  # hole cards being dealt, one round the table per card
    REPLACING = "replacing"  # the deal is round: a seat owed a card for an exposed one gets it
    BETTING = "betting"  # a betting round open on ``Hand.street``
    # Betting open, and cards of the next street dealt early: a card within deal_gap of the
    # last is more of the same dealing action.
    PREMATURE = "premature"
    # Four flop cards to scramble for the burn (TDA 39): a card within deal_gap of the last
    # is a fifth, too many to scramble.
    FOUR_CARD_FLOP = "four_card_flop"
    # A flop of too many going back to be redealt: a card within deal_gap of the last is part
    # of it, not the new flop.
    OVERDEALT_FLOP = "overdealt_flop"
    STREET = "street"  # the burn and board cards of ``Hand.street`` being dealt
    SHOWDOWN = "showdown"  # every street is out
    ENDED = "ended"  # complete, misdealt or void: the hand takes nothing more


SHOWN_AS: dict[Phase, Phase] = {
    **{phase: phase for phase in Phase},
    Phase.REPLACING: Phase.HOLE, Phase.PREMATURE: Phase.BETTING,
    Phase.FOUR_CARD_FLOP: Phase.BETTING, Phase.OVERDEALT_FLOP: Phase.STREET,
}

# The phases a hand may go to from each. A round closed on a street that needs no cards (its
# board came out early) opens the next round at once: betting to betting, street to street.
# A sub-phase goes back to the phase it shows as when its rhythm is over (a card after
# deal_gap, the dealer's tap) or, premature cards, when the round closes.
TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.HOLE: frozenset({Phase.REPLACING, Phase.BETTING, Phase.STREET, Phase.ENDED}),
    Phase.REPLACING: frozenset({Phase.BETTING, Phase.STREET, Phase.ENDED}),
    Phase.BETTING: frozenset({Phase.BETTING, Phase.PREMATURE, Phase.FOUR_CARD_FLOP,
                              Phase.OVERDEALT_FLOP, Phase.STREET, Phase.SHOWDOWN,
                              Phase.ENDED}),
    Phase.PREMATURE: frozenset({Phase.BETTING, Phase.STREET, Phase.ENDED}),
    Phase.FOUR_CARD_FLOP: frozenset({Phase.BETTING, Phase.OVERDEALT_FLOP, Phase.ENDED}),
    Phase.OVERDEALT_FLOP: frozenset({Phase.STREET, Phase.ENDED}),
    Phase.STREET: frozenset({Phase.BETTING, Phase.STREET, Phase.SHOWDOWN, Phase.ENDED}),
    Phase.SHOWDOWN: frozenset({Phase.ENDED}),
    Phase.ENDED: frozenset(),
}
# The sub-phases whose cards within deal_gap are part of an overdealt flop.
OVERDEALT = frozenset({Phase.FOUR_CARD_FLOP, Phase.OVERDEALT_FLOP})


@dataclass(frozen=True, slots=True)
class Decision:
    """What a ruling says: the profile's rule it follows (cited; None: a ruling of the core's
    own), the action, the dealer's text, the machine reason, and fields of its own (those of
    its class, ``Ruling.of``)."""

    rule: ChoiceRule[RulingAction] | None
    action: RulingAction
    text: str
    reason: RulingReason | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Place:
    """Where an irregular card went: its ``card`` event's role, seat and street."""

    role: CardRole
    street: Street
    seat: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class HandStateError(RuntimeError):
    """A move the hand's state machine does not allow: a bug in the core, never an input's
    fault (inputs a hand cannot take are refused before they reach it)."""


@dataclass(slots=True)
class Drawn:
    """A card as the shoe reported it, identity resolved by the table."""

    card: str  # canonical card, JOKER, or UNKNOWN for a tag that maps to no card
    deck: str | None
    face: Face = Face.DOWN
    boxed: bool = False
    tag: str | None = None


@dataclass(slots=True)
class _Premature:
    """The dealing action of the cards dealt early (``Phase.PREMATURE``)."""

    street: Street
    last_t: float
    action: RulingAction
    burn_kept: bool = False
    cards: list[str] = field(default_factory=list)


class Hand:
    """The state of one hand from deck insertion to its end."""

    def __init__(
        self,
        *,
        number: int,
        game: str,
        positions: Positions,
        profile: Profile,
        deck: str | None,
        deal_gap: float,
        t: float,
        redeal: int = 0,
        level: int | None = None,
        blinds: dict[str, int] | None = None,
        dealer: str | None = None,
        declared: str | None = None,
    ) -> None:
        self.number = number
        self.game = game
        self.positions = positions
        self.profile = profile
        self.deck = deck
        self.deal_gap = deal_gap
        self.redeal = redeal
        self.level = level
        self.blinds = blinds  # the level's amounts, when a clock runs
        self.dealer = dealer
        self.declared = declared  # dealer's choice: the game label the dealer declared
        self.started_t = t
        order = positions.deal_order()
        self.slots: list[int] = [seat for _ in range(HOLE_CARDS[game]) for seat in order]
        self.slot_index = 0
        self.replacements: list[int] = []
        self.hole: dict[int, list[str]] = {seat: [] for seat in order}
        self.board: dict[Street, list[str]] = {street: [] for street in STREETS}
        self.burns: list[str] = []
        self.scrap: list[str] = []
        self.out: list[str] = []  # foreign and duplicate cards: never in play
        self.returned: list[str] = []  # back into the stub or set aside (may come out again)
        self.in_play: set[str] = set()
        self.draws = 0
        self.phase = Phase.HOLE
        self.street = Street.PREFLOP
        self.burn_needed = {street: True for street in STREETS}
        self.board_needed = dict(BOARD_COUNT)
        self.street_draws: list[tuple[int, str]] = []  # (n, card) dealt for the current street
        self.street_burn_n: int | None = None
        self.rhythm_t: float | None = None  # time of the last card of the last dealing action
        self.last_t = t
        self.exposed = 0
        self.boxed_in_deal = 0
        self.extras = 0
        self.flop_extra_ruled = False
        self.premature: _Premature | None = None  # Phase.PREMATURE: its dealing action
        self.overdealt_t = t  # Phase.OVERDEALT: the time of the overdealt flop's last card
        self.set_aside: list[str] = []
        self.reshuffle_pending = False
        self.scramble: list[str] | None = None
        self.outcome: str | None = None
        self.events: list[Event] = []

    # ------------------------------------------------------------------ public API

    @property
    def ended(self) -> bool:
        return self.phase is Phase.ENDED

    @property
    def shown_phase(self) -> Phase:
        """The phase the table's state shows (a sub-phase as the phase it refines)."""
        return SHOWN_AS[self.phase]

    def started_event(self, *, waiting: list[int] | None = None, waiting_rule: str | None = None,
                      betting: str | None = None) -> HandStarted:
        positions = self.positions
        return HandStarted(
            hand=self.number, game=self.game, button=positions.button,
            seats=list(positions.seats), level=self.level,
            small_blind=positions.small_blind if positions.small_blind_posted else None,
            big_blind=positions.big_blind, dead_button=positions.dead_button, deck=self.deck,
            redeal=self.redeal, dealer=self.dealer, t=self.started_t, waiting=waiting,
            waiting_rule=waiting_rule, betting=betting, blinds=self.blinds)

    def draw(self, drawn: Drawn, t: float) -> list[Event]:
        self.events = []
        self.draws += 1
        n = self.draws
        self.last_t = t
        if self.deck is None and drawn.deck is not None:
            self.deck = drawn.deck  # deck inserted without an id: the first card names it
        if self.scramble is not None and drawn.card in self.scramble:
            self._identify_scrambled_burn(drawn, t)
            self.draws -= 1
            return self.events
        if drawn.card == UNKNOWN:
            self._place(n, drawn, t)
            placed = next((e for e in reversed(self.events) if isinstance(e, Card)), None)
            seat = placed.seat if placed is not None else None
            street = placed.street if placed is not None else None
            what = f"UNKNOWN TAG {drawn.tag}" if drawn.tag else "UNREADABLE TAG"
            where = f" (seat {seat})" if seat is not None else f" ({street})" if street else ""
            self._irregular(t, IrregularityKind.UNKNOWN_TAG, Decision(
                rules.UNKNOWN_TAG, RulingAction.CALL_FLOOR,
                f"{what}{where}: call the floor to check the card", RulingReason.UNKNOWN_TAG,
                extra={"seat": seat, "street": street}), n=n, drawn=drawn, seat=seat,
                street=street)
            return self.events
        if self.deck is not None and drawn.deck is not None and drawn.deck != self.deck:
            self.out.append(drawn.card)
            self._irregular(t, IrregularityKind.FOREIGN_CARD, Decision(
                rules.FOREIGN_CARD, RulingAction.VOID_HAND,
                f"VOID HAND: {drawn.deck}:{drawn.card} is from another deck - return all bets, "
                "check both decks",
                RulingReason.FOREIGN_CARD),
                n=n, drawn=drawn, place=Place(CardRole.OUT, self._street_for_event()),
                ends="void",
                in_play_deck=self.deck)
            return self.events
        if drawn.card in self.in_play and drawn.card != JOKER:
            self.out.append(drawn.card)
            self._irregular(t, IrregularityKind.DUPLICATE_CARD, Decision(
                rules.DUPLICATE_CARD, RulingAction.VOID_HAND,
                f"VOID HAND: {drawn.card} twice - deck fouled, return all bets, check the deck",
                RulingReason.DUPLICATE_CARD),
                n=n, drawn=drawn, place=Place(CardRole.OUT, self._street_for_event()), ends="void")
            return self.events
        if drawn.boxed:
            self._scrap(n, drawn, t, IrregularityKind.BOXED_CARD)
            return self.events
        if drawn.card == JOKER:
            self._scrap(n, drawn, t, IrregularityKind.JOKER)
            return self.events
        self.in_play.add(drawn.card)
        self._place(n, drawn, t)
        return self.events

    @property
    def nothing_dealt(self) -> bool:
        return self.draws == 0

    def tap(self, t: float) -> list[Event]:
        """The dealer's tap: the current betting round is complete."""
        self.events = []
        if self.phase is Phase.HOLE and self.nothing_dealt:
            # A stray press, or the first press of a double tap after the next deck went in:
            # no betting round can have closed before a card was dealt.
            return self.events
        self.last_t = t
        if self.phase in OVERDEALT:
            self._enter(SHOWN_AS[self.phase])  # the tap ends the overdealt flop's rhythm
        _TAPS[self.phase](self, t)
        return self.events

    def _tap_in_the_deal(self, t: float) -> None:
        if self._dealt_holdem_for_omaha():
            self._irregular(t, IrregularityKind.WRONG_GAME, Decision(
                None, RulingAction.CALL_FLOOR, f"WRONG GAME: {self.declared} declared, 2 cards "
                "each dealt - call the floor", RulingReason.WRONG_GAME,
                extra={"declared": self.declared}), street=Street.PREFLOP,
                declared=self.declared)
        else:
            self._irregular(t, IrregularityKind.MISSING_CARD, Decision(
                rules.MISSING_HOLE_CARD, RulingAction.CALL_FLOOR,
                "FLOOR: hole cards missing and betting closed - call the floor",
                RulingReason.WRONG_CARD_COUNT), street=Street.PREFLOP,
                missing=self._missing_hole())
        self._close_round(Street.PREFLOP, t)

    def _close_betting(self, t: float) -> None:
        self._close_round(self.street, t)

    def _nothing_to_close(self, t: float) -> None:
        """Every street is out: the hand waits for its end (a double tap, the next deck)."""

    def _no_tap(self, t: float) -> None:
        raise HandStateError(f"hand {self.number} is over: a tap is the table's to handle")

    def finish(self, t: float, why: str) -> list[Event]:
        """The hand is over: double tap, or the next deck inserted."""
        self.events = []
        if not self.ended:
            self._end("complete", t, why=why)
        return self.events

    def shoe_fault(self, state: ShoeState, part: str | None, detail: str | None,
                   t: float) -> list[Event]:
        """The shoe's link is lost (``state`` lost) or one of its parts failed (``part``: the
        reader when not said, or ``restart``: it lost power and the reads it held)."""
        self.events = []
        part = "link" if state == ShoeState.LOST else part or "reader"
        if part == "link":
            what = "SHOE LINK LOST"
        elif part == "restart":
            what = "SHOE RESTARTED"
        else:
            what = f"SHOE {part.replace('_', ' ').upper()} FAULT"
        self._irregular(t, IrregularityKind.SHOE_FAULT, Decision(
            rules.SHOE_FAULT, RulingAction.CALL_FLOOR,
            f"{what}: call the floor; hold the deal until the shoe is back",
            RulingReason.SHOE_FAULT, extra={"part": part}), state=state, part=part,
            detail=detail)
        return self.events

    def reads_lost(self, lost: int, cards: int | None, detail: str | None,
                   t: float) -> list[Event]:
        """The shoe dropped ``lost`` messages (``cards`` of them card reads, None if it does
        not say) while its link was down: what was dealt meanwhile is not all known."""
        self.events = []
        if cards is None:
            what = f"{lost} SHOE MESSAGES LOST"
        else:
            what = f"{cards} CARD READ{'S' if cards != 1 else ''} LOST"
        self._irregular(t, IrregularityKind.SHOE_FAULT, Decision(
            rules.SHOE_FAULT, RulingAction.CALL_FLOOR,
            f"{what}: call the floor; check every seat and the board", RulingReason.SHOE_FAULT,
            extra={"part": "reads", "lost": lost, "cards": cards}),
            state=ShoeState.READS_LOST, part="reads", lost=lost, cards=cards, detail=detail)
        return self.events

    def redeclare(self, game: str, label: str) -> None:
        """Dealer's choice: the game declared before the first card (nothing dealt yet)."""
        assert self.nothing_dealt
        self.game = game
        self.declared = label
        order = self.positions.deal_order()
        self.slots = [seat for _ in range(HOLE_CARDS[game]) for seat in order]

    def deck_reinserted(self, t: float) -> bool:
        """A deck insertion of the same deck while a reshuffle is pending continues the hand."""
        if self.reshuffle_pending and not self.ended:
            self.reshuffle_pending = False
            if self.phase in OVERDEALT:
                self._enter(SHOWN_AS[self.phase])  # the reshuffle ends the flop's rhythm
            return True
        return False

    def _enter(self, phase: Phase) -> None:
        if phase not in TRANSITIONS[self.phase]:
            raise HandStateError(f"hand {self.number}: no move from {self.phase} to {phase}")
        self.phase = phase

    # ------------------------------------------------------------------ placing a card

    def _street_for_event(self) -> Street:
        if self.shown_phase is Phase.HOLE:
            return Street.PREFLOP
        if self.shown_phase is Phase.STREET:
            return self.street
        return NEXT_STREET.get(self.street) or self.street

    def _place(self, n: int, drawn: Drawn, t: float) -> None:
        if self.phase in OVERDEALT:
            if t - self.overdealt_t <= self.deal_gap:
                self._overdealt_flop_card(n, drawn, t)
                return
            self._enter(SHOWN_AS[self.phase])  # a new dealing action
        _PLACES[self.phase](self, n, drawn, t)

    def _card_dealt_early(self, n: int, drawn: Drawn, t: float) -> None:
        street = NEXT_STREET[self.street]
        assert street is not None  # the river's betting takes no premature card
        self._premature_card(n, drawn, t, street)

    def _no_card(self, n: int, drawn: Drawn, t: float) -> None:
        raise HandStateError(f"hand {self.number} is over: it takes no card")

    def _card_after_the_river(self, n: int, drawn: Drawn, t: float) -> None:
        self._return_to_stub(drawn.card)
        self._irregular(t, IrregularityKind.TOO_MANY_BOARD_CARDS, Decision(
            None, RulingAction.CALL_FLOOR,
            f"EXTRA CARD {drawn.card} after the river: call the floor",
            RulingReason.TOO_MANY_BOARD_CARDS), n=n, drawn=drawn,
            place=Place(CardRole.OUT, Street.RIVER), street=Street.RIVER)

    def _hole_card(self, n: int, drawn: Drawn, t: float) -> None:
        replacing = self.phase is Phase.REPLACING
        seat = self.replacements[0] if replacing else self.slots[self.slot_index]
        if drawn.face == Face.UP:
            self.exposed += 1
            if self.exposed >= 2:
                self.hole[seat].append(drawn.card)
                self._irregular(t, IrregularityKind.EXPOSED_CARD, Decision(
                    rules.EXPOSED_TWO_CARDS, RulingAction.MISDEAL,
                    "MISDEAL: two hole cards exposed - reshuffle, button stays",
                    RulingReason.EXPOSED_TWO_CARDS), n=n, drawn=drawn,
                    place=Place(CardRole.HOLE, Street.PREFLOP, seat), ends="misdeal",
                    seat=seat,
                    exposed=self.exposed)
                return
            if replacing:
                rule = rules.EXPOSED_LATER_CARD
            else:
                rule = {0: rules.EXPOSED_FIRST_CARD, 1: rules.EXPOSED_SECOND_CARD}.get(
                    self.slot_index, rules.EXPOSED_LATER_CARD)
            action = self.profile.choice(rule)
            if action is RulingAction.MISDEAL:
                self.hole[seat].append(drawn.card)
                which = ORDINAL.get(self.slot_index, "a")
                reason = (RulingReason.EXPOSED_FIRST_TWO if rule is not rules.EXPOSED_LATER_CARD
                          else RulingReason.EXPOSED_CARD)
                self._irregular(t, IrregularityKind.EXPOSED_CARD, Decision(
                    rule, action, f"MISDEAL: {which} card exposed - reshuffle, button stays",
                    reason), n=n, drawn=drawn, place=Place(CardRole.HOLE, Street.PREFLOP, seat),
                    ends="misdeal", seat=seat)
                return
            # replace_exposed: the deal goes on; the seat is owed the next card after the deal
            # and the exposed card becomes the flop's burn.
            self.burns.append(drawn.card)
            self.burn_needed[Street.FLOP] = False
            self._irregular(t, IrregularityKind.EXPOSED_CARD, Decision(
                rule, action, f"EXPOSED {drawn.card} seat {seat}: deal on; after the "
                f"deal seat {seat} gets the next card; {drawn.card} is the flop burn",
                extra={"seat": seat}), n=n, drawn=drawn,
                place=Place(CardRole.BURN, Street.FLOP, extra={"dealt_to": seat}), seat=seat)
            self.replacements.append(seat)
        else:
            self._card_event(n, drawn, CardRole.HOLE, seat, Street.PREFLOP, t,
                             replacement=True if replacing else None)
            self.hole[seat].append(drawn.card)
        if replacing:
            self.replacements.pop(0)
        else:
            self.slot_index += 1
        if self.slot_index >= len(self.slots) and not self.replacements:
            self._enter(Phase.BETTING)
            self.street = Street.PREFLOP
            self.rhythm_t = t
        elif self.slot_index >= len(self.slots) and not replacing:
            self._enter(Phase.REPLACING)

    def _street_card(self, n: int, drawn: Drawn, t: float) -> None:
        street = self.street
        expected = (1 if self.burn_needed[street] else 0) + self.board_needed[street]
        burn_turn = self.burn_needed[street] and self.street_burn_n is None
        if burn_turn:
            self._card_event(n, drawn, CardRole.BURN, None, street, t)
            self.burns.append(drawn.card)
            self.street_burn_n = n
        else:
            self._card_event(n, drawn, CardRole.BOARD, None, street, t)
            self.board[street].append(drawn.card)
        self.street_draws.append((n, drawn.card))
        if len(self.street_draws) >= expected:
            self._enter(Phase.BETTING)
            self.rhythm_t = t
            self.burn_needed[street] = False
            self.board_needed[street] = 0

    def _card_while_betting(self, n: int, drawn: Drawn, t: float) -> None:
        street = self.street
        in_rhythm = self.rhythm_t is not None and t - self.rhythm_t <= self.deal_gap
        if in_rhythm:
            if street == Street.PREFLOP:
                self._extra_hole_card(n, drawn, t)
                return
            if street == Street.FLOP and not self.flop_extra_ruled:
                self._fourth_flop_card(n, drawn, t)
                return
        nxt = NEXT_STREET[street]
        if nxt is None:  # betting on the river: every street is out
            self._card_after_the_river(n, drawn, t)
            return
        self._premature_card(n, drawn, t, nxt)

    def _extra_hole_card(self, n: int, drawn: Drawn, t: float) -> None:
        self.extras += 1
        self.rhythm_t = t
        if self.extras >= 2:
            self.out.append(drawn.card)
            self._irregular(t, IrregularityKind.EXTRA_CARD, Decision(
                rules.EXTRA_TWO_CARDS, RulingAction.MISDEAL,
                "MISDEAL: two extra hole cards - reshuffle, button stays",
                RulingReason.WRONG_CARD_COUNT,
                extra={"declared": self.declared}), n=n, drawn=drawn,
                place=Place(CardRole.OUT, Street.PREFLOP), ends="misdeal", extra=self.extras,
                declared=self.declared)
            return
        action = self.profile.choice(rules.EXTRA_HOLE_CARD)
        if action is RulingAction.MISDEAL:
            self.out.append(drawn.card)
            self._irregular(t, IrregularityKind.EXTRA_CARD, Decision(
                rules.EXTRA_HOLE_CARD, action, "MISDEAL: extra hole card - reshuffle, button stays",
                RulingReason.WRONG_CARD_COUNT), n=n, drawn=drawn,
                place=Place(CardRole.OUT, Street.PREFLOP), ends="misdeal", extra=self.extras)
            return
        if self.burn_needed[Street.FLOP]:
            self.burns.append(drawn.card)
            self.burn_needed[Street.FLOP] = False
            place = Place(CardRole.BURN, Street.FLOP)
            text = f"EXTRA CARD {drawn.card}: it is the flop burn; flop is 3 cards, no burn"
        else:
            # The flop's burn is already on the table (an exposed card): back into the stub.
            self._return_to_stub(drawn.card)
            place = Place(CardRole.OUT, Street.FLOP)
            text = f"EXTRA CARD {drawn.card}: back on the deck; burn already out"
        self._irregular(t, IrregularityKind.EXTRA_CARD,
                        Decision(rules.EXTRA_HOLE_CARD, action, text), n=n, drawn=drawn,
                        place=place, extra=self.extras)

    def _fourth_flop_card(self, n: int, drawn: Drawn, t: float) -> None:
        self.flop_extra_ruled = True
        self.board[Street.FLOP].append(drawn.card)
        action = self.profile.choice(rules.TOO_MANY_FLOP_CARDS)
        flop = list(self.board[Street.FLOP])
        self.overdealt_t = t
        if action is RulingAction.REDEAL_FLOP:
            for card in flop:
                self._return_to_stub(card)
            self._flop_to_redeal()
            ruling = Decision(rules.TOO_MANY_FLOP_CARDS, action, "4-CARD FLOP: burn stays; "
                              "flop back in the stub, reshuffle, deal a new flop without burning",
                              RulingReason.TOO_MANY_BOARD_CARDS, extra={"returned": flop})
        else:  # scramble_flop (TDA 39): one of the four is picked at random as the next burn
            self.scramble = flop
            self.board[Street.FLOP] = []
            self.burn_needed[Street.TURN] = False
            self.rhythm_t = t
            self._enter(Phase.FOUR_CARD_FLOP)
            ruling = Decision(rules.TOO_MANY_FLOP_CARDS, action, "4-CARD FLOP: call the floor - "
                              "scramble the 4 face down, floor picks the burn; scan it to "
                              "record it", RulingReason.TOO_MANY_BOARD_CARDS,
                              extra={"candidates": flop})
        self._irregular(t, IrregularityKind.TOO_MANY_BOARD_CARDS, ruling, n=n, drawn=drawn,
                        place=Place(CardRole.BOARD, Street.FLOP), street=Street.FLOP)

    def _flop_to_redeal(self) -> None:
        """The flop goes back into the stub: reshuffle, then three cards without a burn (the
        cards still coming in its rhythm are part of it)."""
        self.board[Street.FLOP] = []
        self.burn_needed[Street.FLOP] = False
        self.board_needed[Street.FLOP] = 3
        self._enter(Phase.OVERDEALT_FLOP)
        self.street = Street.FLOP
        self.street_draws = []
        self.street_burn_n = None
        self.reshuffle_pending = True

    def _overdealt_flop_card(self, n: int, drawn: Drawn, t: float) -> None:
        """A fifth (or later) card of a flop already ruled too many: one ruling covers the whole
        flop (TDA 39, seeds 000 and 003: the flop is redealt), not a premature turn."""
        self.overdealt_t = t
        self._card_event(n, drawn, CardRole.OUT, None, Street.FLOP, t, overdealt=True)
        self._return_to_stub(drawn.card)
        if self.phase is Phase.FOUR_CARD_FLOP and self.scramble is not None:
            # Scrambling four to pick a burn leaves a flop of three; with five or more there is
            # no such pick: the whole flop goes back and is redealt, the burn stays.
            flop = [*self.scramble, drawn.card]
            for card in self.scramble:
                self._return_to_stub(card)
            self.scramble = None
            self.burn_needed[Street.TURN] = True
            self._flop_to_redeal()
            self._irregular(t, IrregularityKind.TOO_MANY_BOARD_CARDS, Decision(
                None, RulingAction.REDEAL_FLOP, f"{len(flop)}-CARD FLOP: too many to scramble "
                "- burn stays; flop back in the stub, reshuffle, deal a new flop without "
                "burning", RulingReason.TOO_MANY_BOARD_CARDS,
                extra={"returned": flop}), n=n, drawn=drawn, street=Street.FLOP,
                flop_cards=len(flop))

    def _identify_scrambled_burn(self, drawn: Drawn, t: float) -> None:
        assert self.scramble is not None
        burn = drawn.card
        flop = [c for c in self.scramble if c != burn]
        self.scramble = None
        self.board[Street.FLOP] = flop
        self.burns.append(burn)
        self.events.append(BoardResolved(hand=self.number, street=Street.FLOP, burn=burn,
                                         board=flop, t=t))

    def _premature_card(self, n: int, drawn: Drawn, t: float, street: Street) -> None:
        p = self.premature
        new_action = p is None or t - p.last_t > self.deal_gap or p.street != street
        if new_action:
            action = self.profile.choice(PREMATURE[street])
            p = self.premature = _Premature(street, t, action)
            if self.phase is Phase.BETTING:
                self._enter(Phase.PREMATURE)
        assert p is not None
        p.last_t = t
        p.cards.append(drawn.card)
        keep_as_burn = self.burn_needed[street] and not p.burn_kept
        if keep_as_burn:
            self._card_event(n, drawn, CardRole.BURN, None, street, t, premature=True)
            self.burns.append(drawn.card)
            p.burn_kept = True
            self.burn_needed[street] = False
        elif p.action is RulingAction.SET_ASIDE_TURN:
            self._card_event(n, drawn, CardRole.OUT, None, street, t, premature=True)
            self.set_aside.append(drawn.card)
            self.returned.append(drawn.card)
            # Robert's: after betting burn and deal the next card as the turn; the river then
            # comes from the reshuffled stub (set-aside card included) without a burn.
            self.burn_needed[Street.TURN] = True
            self.burn_needed[Street.RIVER] = False
        else:
            self._card_event(n, drawn, CardRole.OUT, None, street, t, premature=True)
            self._return_to_stub(drawn.card)
            self.reshuffle_pending = True
        if not new_action:
            return
        if p.action is RulingAction.SET_ASIDE_TURN:
            text = ("PREMATURE TURN: card out of play; after betting burn and turn; "
                    "reshuffle it in before the river, no burn")
        else:
            text = (f"PREMATURE {street.upper()}: burn stays, card back in the stub, reshuffle; "
                    f"after betting deal the {street} without burning")
        self._irregular(t, IrregularityKind.PREMATURE_CARD, Decision(
            PREMATURE[street], p.action, text, extra={"street": street}), n=n, drawn=drawn,
            street=street, betting=self.street)

    def _scrap(self, n: int, drawn: Drawn, t: float, kind: IrregularityKind) -> None:
        street = self._street_for_event()
        self._card_event(n, drawn, CardRole.SCRAP, None, street, t)
        self.scrap.append(drawn.card)
        if drawn.card != JOKER:
            self.in_play.add(drawn.card)  # a boxed card is still a card of this deck
        if kind is IrregularityKind.BOXED_CARD and self.shown_phase is Phase.HOLE:
            self.boxed_in_deal += 1
            if (self.boxed_in_deal >= 2
                    and self.profile.choice(rules.BOXED_TWO_CARDS) is RulingAction.MISDEAL):
                self._irregular(t, kind, Decision(
                    rules.BOXED_TWO_CARDS, RulingAction.MISDEAL, "MISDEAL: two boxed cards - "
                    "reshuffle, button stays", RulingReason.BOXED_TWO_CARDS), n=n, drawn=drawn,
                    ends="misdeal", street=street)
                return
            rule = rules.BOXED_TWO_CARDS if self.boxed_in_deal >= 2 else rules.BOXED_CARD
        else:
            rule = rules.JOKER if kind is IrregularityKind.JOKER else rules.BOXED_CARD
        what = "JOKER" if kind is IrregularityKind.JOKER else f"BOXED {drawn.card}"
        self._irregular(t, kind, Decision(
            rule, RulingAction.SCRAP_AND_REPLACE,
            f"{what}: scrap of paper - the next card takes its place"),
            n=n, drawn=drawn, street=street)

    # ------------------------------------------------------------------ closing rounds

    def _close_round(self, street: Street, t: float) -> None:
        self.premature = None
        if street == Street.TURN and self.set_aside:
            for card in self.set_aside:
                self.in_play.discard(card)
            self.set_aside = []
            self.reshuffle_pending = True
        nxt = NEXT_STREET[street]
        if nxt is None:
            self._enter(Phase.SHOWDOWN)
            return
        self.street = nxt
        self.street_draws = []
        self.street_burn_n = None
        # A street whose cards are all out already (dealt early) opens its betting at once.
        needs_cards = self.board_needed[nxt] > 0 or self.burn_needed[nxt]
        self._enter(Phase.STREET if needs_cards else Phase.BETTING)

    def _close_partial_street(self, t: float) -> None:
        street = self.street
        drawn = len(self.street_draws)
        if drawn == 0:
            return  # nothing of this street is out: a tap with nothing to close
        needed_board = self.board_needed[street]
        if self.street_burn_n is not None and drawn == needed_board:
            # Every draw was a board card: the dealer did not burn.
            first_n, first_card = self.street_draws[0]
            self.burns.remove(first_card)
            self.board[street].insert(0, first_card)
            reassigned = {"reassigned": {first_card: CardRole.BOARD.value}}
            if self.profile.choice(rules.MISSING_BURN) is RulingAction.BOARD_STANDS:
                ruling = Decision(rules.MISSING_BURN, RulingAction.BOARD_STANDS, f"NO BURN on the "
                                  f"{street}: the board stands, no burn this street",
                                  extra=reassigned)
            else:
                ruling = Decision(rules.MISSING_BURN, RulingAction.CALL_FLOOR, f"NO BURN on the "
                                  f"{street}: call the floor", RulingReason.MISSING_BURN,
                                  extra=reassigned)
            self._irregular(t, IrregularityKind.MISSING_BURN, ruling, n=first_n, street=street)
        else:
            expected = (1 if self.burn_needed[street] else 0) + needed_board
            self._irregular(t, IrregularityKind.MISSING_CARD, Decision(
                None, RulingAction.CALL_FLOOR, f"SHORT {street.upper()}: betting closed with "
                "cards missing - call the floor", RulingReason.WRONG_CARD_COUNT),
                street=street, missing=expected - drawn)
        self.burn_needed[street] = False
        self.board_needed[street] = 0
        self._close_round(street, t)

    def _dealt_holdem_for_omaha(self) -> bool:
        """An Omaha game declared, and the deal stopped at two cards a seat."""
        return (self.declared is not None and HOLE_CARDS[self.game] == 4
                and not self.replacements and self.slot_index == len(self.slots) // 2
                and all(len(cards) == 2 for cards in self.hole.values()))

    def _missing_hole(self) -> dict[str, int]:
        missing: dict[str, int] = {}
        for seat in self.slots[self.slot_index:] + self.replacements:
            missing[str(seat)] = missing.get(str(seat), 0) + 1
        return missing

    def _return_to_stub(self, card: str) -> None:
        self.in_play.discard(card)
        self.returned.append(card)

    def _out_of_play(self) -> list[str]:
        """Cards drawn this hand that are in no seat, board, burn or scrap at its end."""
        played = set(self.burns) | set(self.scrap) | {
            c for cards in self.board.values() for c in cards} | {
            c for cards in self.hole.values() for c in cards}
        returned = [c for c in dict.fromkeys(self.returned) if c not in played]
        return list(dict.fromkeys(self.out + returned))

    # ------------------------------------------------------------------ events

    def _irregular(self, t: float, kind: IrregularityKind, ruling: Decision, *,
                   n: int | None = None, drawn: Drawn | None = None, place: Place | None = None,
                   ends: str | None = None, **details: Any) -> None:
        """The sequence every irregularity makes: the card's own event (where it went, when
        a card caused it), the irregularity with ``details`` (the fields of its kind's class),
        the ruling, and the hand's end when the ruling ends it (``ends``: misdeal or void).
        The caller files the card first (a seat, the burns, out of play) so that the end
        accounts for it."""
        if place is not None:
            assert n is not None and drawn is not None
            self._card_event(n, drawn, place.role, place.seat, place.street, t, **place.extra)
        if drawn is not None:
            details.update(card=drawn.card, tag=drawn.tag)
        if n is not None:
            details["n"] = n
        self.events.append(Irregularity.of(kind)(hand=self.number, t=t, **details))
        rule = ruling.rule
        self.events.append(Ruling.of(ruling.action, ruling.reason)(
            hand=self.number, action=ruling.action, reason=ruling.reason, text=ruling.text,
            profile=self.profile.name, rule=rule.key if rule is not None else None,
            source=self.profile.rules[rule.key].source if rule is not None else None, t=t,
            **ruling.extra))
        if ends is not None:
            self._end(ends, t)

    def _card_event(self, n: int, drawn: Drawn, role: CardRole, seat: int | None, street: Street,
                    t: float, **extra: Any) -> None:
        self.events.append(Card(
            hand=self.number, n=n, card=drawn.card, deck=drawn.deck, role=role, street=street,
            seat=seat, face=Face.UP if drawn.face == Face.UP else None,
            boxed=True if drawn.boxed else None, tag=drawn.tag, t=t, **extra))

    def _end(self, outcome: str, t: float, why: str | None = None) -> None:
        self._enter(Phase.ENDED)
        self.outcome = outcome
        hole = {str(seat): list(cards) for seat, cards in self.hole.items()}
        board = self.board[Street.FLOP] + self.board[Street.TURN] + self.board[Street.RIVER]
        self.events.append(HandEnded(
            hand=self.number, outcome=outcome, hole=hole, board=board, burns=list(self.burns),
            scrap=list(self.scrap), out=self._out_of_play(), level=self.level,
            button=self.positions.button, draws=self.draws,
            flop_unresolved=list(self.scramble) if self.scramble is not None else None,
            ended_by=why, t=t))


# What the dealer's tap does in each phase (in an overdealt flop's, it ends the rhythm first).
_TAPS: dict[Phase, Callable[[Hand, float], None]] = {
    Phase.HOLE: Hand._tap_in_the_deal, Phase.REPLACING: Hand._tap_in_the_deal,
    Phase.BETTING: Hand._close_betting, Phase.PREMATURE: Hand._close_betting,
    Phase.STREET: Hand._close_partial_street, Phase.SHOWDOWN: Hand._nothing_to_close,
    Phase.ENDED: Hand._no_tap,
}
# What a card drawn in each phase is (in an overdealt flop's, its rhythm decides: Hand._place).
_PLACES: dict[Phase, Callable[[Hand, int, Drawn, float], None]] = {
    Phase.HOLE: Hand._hole_card, Phase.REPLACING: Hand._hole_card,
    Phase.BETTING: Hand._card_while_betting, Phase.PREMATURE: Hand._card_dealt_early,
    Phase.STREET: Hand._street_card, Phase.SHOWDOWN: Hand._card_after_the_river,
    Phase.ENDED: Hand._no_card,
}
