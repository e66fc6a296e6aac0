"""The table core: one object that every input goes into and every event comes out of.

``Table.handle(input)`` takes one input (``controller.inputs``) and returns the events it causes,
in order. Time comes in with the inputs (``t``); the core never reads a clock and does no I/O, so
the daemon, the simulator, the tests and ``tablectl replay`` all run this same code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, cast

from controller.cards import REREAD_SECONDS, UNKNOWN, Rereads, TaggedCard, parse_ndef_text
from controller.clock import BlindClock, Structure, no_structures
from controller.decks import DeckCheck, DeckRegistry
from controller.events import (
    CardIgnored,
    ClockAction,
    ClockChanged,
    ClockHold,
    DeckChanged,
    DeckCheckAction,
    DeckCheckCancelled,
    DeckCheckCard,
    DeckCheckStarted,
    Event,
    FloorCalled,
    HandEnded,
    HandLevel,
    Ruling,
    RulingAction,
    Seating,
    ShoeChanged,
    ShoeReadsLost,
    ShoeState,
    TableSetup,
)
from controller.hand import Drawn, Hand
from controller.inputs import (
    CardRead,
    ClockCommand,
    DealerSignIn,
    DeckCheckCommand,
    DeckIn,
    DeckOut,
    Gesture,
    HandForHand,
    Input,
    SeatsChange,
    Setup,
    ShoeStatus,
)
from controller.profiles import (
    BUTTON_MOVEMENT,
    FLOOR_CALL_CLOCK,
    GAME_DECLARATION,
    LEVEL_CHANGE_TIMING,
    NEW_PLAYER,
    FloorCallClock,
    GameDeclaration,
    LevelChangeTiming,
    Profile,
)
from controller.record import hand_record
from controller.seating import (
    Positions,
    SeatingError,
    initial_positions,
    next_positions,
    seat_newcomers,
)
from controller.table_parts import (
    DealersChoice,
    DealerShift,
    HandForHandState,
    ShotClockTimer,
)


class GestureAction(StrEnum):
    """What a dealer's gesture on the button does (the configuration maps each gesture)."""

    CLOSE_ROUND = "close_round"
    END_HAND = "end_hand"
    SHOT_CLOCK = "shot_clock"
    CALL_FLOOR = "call_floor"
    IGNORE = "ignore"


GESTURE_ACTIONS = tuple(GestureAction)
_GESTURE_ACTION = {str(action): action for action in GestureAction}  # by its spelling
DEFAULT_GESTURES: dict[str, str] = {
    "tap": GestureAction.CLOSE_ROUND,
    "double_tap": GestureAction.END_HAND,
    "hold": GestureAction.SHOT_CLOCK,
    "long_hold": GestureAction.CALL_FLOOR,
}


class TableUsageError(ValueError):
    """An input that the table cannot act on in its present state (the caller's mistake)."""


@dataclass
class TableConfig:
    deal_gap: float = 3.0  # seconds after the last expected card that still belong to the deal
    reread_window: float = REREAD_SECONDS  # the same tag again within this is one card
    gestures: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_GESTURES))
    evaluate: bool = True  # compute best hands in the hand record


class Table:
    def __init__(
        self,
        profile: Profile,
        config: TableConfig | None = None,
        structure_loader: Callable[[str], Structure] = no_structures,
        registry: DeckRegistry | None = None,
    ) -> None:
        self.profile = profile
        self.config = config or TableConfig()
        self.structure_loader = structure_loader
        self.now = 0.0
        self.game = "holdem"
        self.seats: tuple[int, ...] | None = None
        self.setup_button: int | None = None
        self.hand: Hand | None = None
        self.next_number = 1
        self.last_positions: Positions | None = None
        self.last_outcome: str | None = None
        self.redeals = 0
        self.pending_setup: Setup | None = None
        self.pending_seats: tuple[int, ...] | None = None
        # The hub's version of the seating this table deals (0: none from the hub yet) and of
        # the one it holds for its next hand: an older one is refused (hub/seating.py).
        self.seating_version = 0
        self.pending_seating_version: int | None = None
        self.registry = registry or DeckRegistry()  # enrolled tags; setup lines add to it
        self.setup_tags: dict[str, str] = {}  # what setup lines added (uid -> tag text)
        self.deck_check: DeckCheck | None = None
        self.last_deck: str | None = None
        self.shift = DealerShift()
        self.clock: BlindClock | None = None
        self.clock_source = "table"  # "venue" once the hub's clock is followed (sync)
        self.shot = ShotClockTimer()
        self.shoe_state = ShoeState.OK
        self._rereads = Rereads(self.config.reread_window)
        self.choice = DealersChoice()
        self.waiting: tuple[int, ...] = ()  # seated, dealt around until the button passes
        self.betting: str | None = None
        self.hand_for_hand = HandForHandState()

    # ------------------------------------------------------------------ entry point

    def handle(self, item: Input) -> list[Event]:
        # The clocks only move forward; an input keeps its own time (a card retransmitted after
        # an unplug was drawn when the shoe says, and the dealing rhythm is judged on that).
        t = self.now if item.t is None else item.t
        self.now = max(self.now, t)
        events = self.advance(self.now)
        if isinstance(item, CardRead):
            events += self._card(item, t)
        elif isinstance(item, Gesture):
            events += self._gesture(item.gesture, t)
        elif isinstance(item, DeckIn):
            events += self._deck_in(item.deck, t)
        elif isinstance(item, Setup):
            events += self._setup(item, t)
        elif isinstance(item, SeatsChange):
            events += self._seats(item, t)
        elif isinstance(item, ClockCommand):
            events += self._clock(item, t)
        elif isinstance(item, ShoeStatus):
            events += self._shoe(item, t)
        elif isinstance(item, DealerSignIn):
            events += self.shift.sign_in(item.dealer, t)
        elif isinstance(item, HandForHand):
            events += self.hand_for_hand.command(item.state, self.hand_in_progress, t)
        elif isinstance(item, DeckCheckCommand):
            events += self._deck_check(item, t)
        elif isinstance(item, DeckOut):
            events.append(DeckChanged(state="removed", deck=self.last_deck,
                                      hand=self._active_number(), t=t))
        if self.profile.choice(FLOOR_CALL_CLOCK) is FloorCallClock.PAUSES and any(
                isinstance(e, FloorCalled)
                or (isinstance(e, Ruling) and e.action is RulingAction.CALL_FLOOR)
                for e in events):
            events += self._hold_clock_for_floor(t)
        return self._stamped(events)

    def _hold_clock_for_floor(self, t: float) -> list[Event]:
        """The house stops the clock for a dispute that needs the floor (seed 003): the table's
        clock pauses now; when the venue clock rules, the hub is asked to pause it (its next
        reading would run the table's again), and only the floor resumes it."""
        clock = self.clock
        if clock is None or clock.stopped or clock.paused:
            return []
        rule = self.profile.rules[FLOOR_CALL_CLOCK.key]
        events: list[Event] = []
        if self.clock_source == "venue":
            events.append(ClockHold(reason="floor_call", hand=self._active_number(),
                                    rule=FLOOR_CALL_CLOCK.key, source=rule.source, t=t))
        return events + clock.pause(t, reason="floor_call")

    def _stamped(self, events: list[Event]) -> list[Event]:
        # SPEC 1.3: the dealer signed in is in every event until the next sign-in.
        dealer = self.shift.dealer
        if dealer is not None:
            return [event.stamped(dealer) for event in events]
        return events

    def advance(self, t: float) -> list[Event]:
        """Let time pass: blind clock boundaries, shot-clock countdown and expiry."""
        events: list[Event] = []
        if self.clock is not None:
            events += self.clock.advance(t)
        if self.shot.running is not None:
            events += self.shot.advance(self._active_number(), t)
        return self._stamped(events)

    @property
    def hand_in_progress(self) -> bool:
        return self.hand is not None and not self.hand.ended

    @property
    def at_rest(self) -> bool:
        """Between hands with nothing half done (no deck check running, no seating waiting
        for a hand's end): what a snapshot of the table holds (``controller.snapshot``)."""
        return (not self.hand_in_progress and self.deck_check is None
                and self.pending_setup is None and self.pending_seats is None)

    def last_read(self) -> tuple[str, str | None, str | None, float | None] | None:
        """The last card read (card, deck, tag) and its time: a read of the same card again
        within the re-read window is that card passing the antenna, not a second one."""
        last = self._rereads.last
        if last is None:
            return None
        key, t = last
        card, deck, tag = cast(tuple[str, str | None, str | None], key)
        return card, deck, tag, t

    def restore_last_read(self, read: tuple[str, str | None, str | None, float | None]) -> None:
        self._rereads.remember(read[:3], read[3])

    def _active_number(self) -> int | None:
        return self.hand.number if self.hand is not None and not self.hand.ended else None

    # ------------------------------------------------------------------ setup and seating

    def _setup(self, item: Setup, t: float) -> list[Event]:
        for uid, text in item.tags:
            self.registry.tags[uid] = parse_ndef_text(text)
            self.setup_tags[uid] = text
        if self.hand_in_progress:
            self.pending_setup = item
            return [self._setup_event(item, "next_hand", t)]
        self._apply_setup(item)
        return [self._setup_event(item, "now", t)]

    def _setup_event(self, item: Setup, effective: str, t: float) -> TableSetup:
        seats = (list(item.seats) if item.seats is not None else
                 (list(self.seats) if self.seats else None))
        return TableSetup(effective=effective, game=item.game or self.game, seats=seats,
                          button=item.button, profile=self.profile.name, t=t)

    def _apply_setup(self, item: Setup) -> None:
        if item.game is not None:
            self.game = item.game
        if item.seats is not None:
            self.seats, self.seating_version = item.seats, 0  # the table's own, not the hub's
        if item.hand is not None:
            self.next_number = item.hand
        if item.seats is not None or item.button is not None:
            # A new seating with its own button starts the button afresh.
            self.setup_button = item.button
            self.last_positions = None
            self.last_outcome = None

    def _seats(self, item: SeatsChange, t: float) -> list[Event]:
        seats = item.seats
        version = item.version
        if version is not None:
            held = max(self.seating_version, self.pending_seating_version or 0)
            if version < held:
                raise TableUsageError(f"seating version {version} is older than version "
                                      f"{held}, which this table holds: the hub's newer "
                                      "seating stands")
            if version == held:
                same = (self.pending_seats if self.pending_seating_version == version
                        else self.seats)
                if same is not None and set(same) == set(seats):
                    return []  # the hub sent it again (it had not heard): nothing changes
                raise TableUsageError(f"seating version {version} is held already with "
                                      "other seats: the hub numbers each seating once")
        # Players the floor moves between tables (balancing, a broken table): the display
        # tells the dealer who goes where.
        moves = [move.to_json() for move in item.moves] or None
        if self.hand_in_progress:
            # A seating from elsewhere (no version) is not the hub's: its version goes.
            self.pending_seats, self.pending_seating_version = seats, version
            return [Seating(seats=list(seats), effective="next_hand", moves=moves, t=t,
                            version=version)]
        self.seats, self.seating_version = seats, version or 0
        return [Seating(seats=list(seats), effective="now", moves=moves, t=t,
                        version=version)]

    def _positions_for_next_hand(self) -> Positions:
        if self.seats is None:
            raise TableUsageError("a deck was inserted before the table was set up: give a "
                                  "'setup' line with the game, the seats and the button first")
        seats = self.seats
        previous = self.last_positions
        if (previous is not None and self.last_outcome in ("misdeal", "void")
                and set(seats) == set(previous.seats) | set(self.waiting)):
            return previous  # the same hand again: the same positions, the same players wait
        positions, self.waiting = seat_newcomers(self._positions_among, seats, previous,
                                                 self.profile.choice(NEW_PLAYER))
        return positions

    def _positions_among(self, seats: tuple[int, ...]) -> Positions:
        previous = self.last_positions
        try:
            if previous is None:
                button = self.setup_button if self.setup_button is not None else seats[0]
                if button not in seats:
                    raise SeatingError(f"the button seat {button} is no longer occupied; "
                                       "give a setup line with a new button")
                return initial_positions(seats, button)
            if self.last_outcome in ("misdeal", "void"):
                # The button stays for the redeal (misdeal) or the replayed hand (void).
                if previous.seats == seats:
                    return previous
                if previous.button in seats:
                    return initial_positions(seats, previous.button)
                return next_positions(previous, seats, self.profile.choice(BUTTON_MOVEMENT))
            return next_positions(previous, seats, self.profile.choice(BUTTON_MOVEMENT))
        except SeatingError as exc:
            raise TableUsageError(str(exc)) from None

    @property
    def declares_game(self) -> bool:
        return self.profile.choice(GAME_DECLARATION) is GameDeclaration.DEALER_DECLARES

    def _declared_label(self) -> str | None:
        return self.choice.label(self.game, self.betting) if self.declares_game else None

    def _declare_for_hand(self, hand: Hand, t: float) -> list[Event]:
        """Dealer's choice, the deck in but no card dealt: a tap still declares the game, for
        this hand. The cycle goes on from the hand's game when the dealer had declared it."""
        self.game, self.betting, label, events = self.choice.tap_before_first_card(
            hand.number, t)
        hand.redeclare(self.game, label)
        return events

    # ------------------------------------------------------------------ hands

    def _deck_in(self, deck: str | None, t: float) -> list[Event]:
        events: list[Event] = []
        if self.hand is not None and not self.hand.ended:
            same_deck = deck is None or deck == self.hand.deck
            if same_deck and self.hand.deck_reinserted(t):
                return [DeckChanged(state="reinserted", deck=self.hand.deck,
                                    hand=self.hand.number, t=t)]
            events += self._after(self.hand.finish(t, "next_deck"), t)
        positions = self._positions_for_next_hand()
        events += self.hand_for_hand.deck_in(t)
        if self.declares_game and self.last_outcome != "misdeal":
            self.game, self.betting, declared = self.choice.deck_in(t)
            events += declared
        if self.last_outcome == "misdeal":
            self.redeals += 1
            number = self.next_number - 1
        else:
            self.redeals = 0
            number = self.next_number
            self.next_number += 1
        if deck is not None:
            self.last_deck = deck
        level = self.clock.current_level() if self.clock is not None else None
        blinds = self.clock.current_blinds() if self.clock is not None else None
        self.hand = Hand(
            number=number, game=self.game, positions=positions, profile=self.profile,
            deck=deck, deal_gap=self.config.deal_gap, t=t, redeal=self.redeals, level=level,
            blinds=blinds,
            dealer=self.shift.dealer, declared=self._declared_label(),
        )
        self.last_outcome = None
        self.last_positions = positions
        self._rereads.forget()
        events.append(self.hand.started_event(
            waiting=list(self.waiting) if self.waiting else None,
            waiting_rule=self.profile.rules[NEW_PLAYER.key].source if self.waiting else None,
            betting=self.betting if self.declares_game else None))
        return events

    def _resolve(self, item: CardRead) -> Drawn:
        card, deck = item.card, item.deck
        if card is None and item.tag is None:  # the shoe could not read the tag at all
            return Drawn(UNKNOWN, None, item.face, item.boxed, None)
        if card is None and item.tag is not None:
            tagged = self.registry.resolve(item.tag, None)
            if tagged is None:
                return Drawn(UNKNOWN, None, item.face, item.boxed, item.tag)
            card, deck = tagged.card, tagged.deck
        if deck is None:
            deck = self.hand.deck if self.hand is not None and self.hand.deck else self.last_deck
        assert card is not None
        return Drawn(card, deck, item.face, item.boxed, item.tag)

    def _card(self, item: CardRead, t: float) -> list[Event]:
        drawn = self._resolve(item)
        if self._rereads.is_repeat((drawn.card, drawn.deck, drawn.tag), t):
            return []  # the reader saw the same tag twice as the card passed: one card
        if self.deck_check is not None:
            check = self.deck_check
            check.add(None if drawn.card == UNKNOWN else TaggedCard(drawn.deck or "?", drawn.card),
                      drawn.tag)
            return [DeckCheckCard(deck=check.deck, card=drawn.card, card_deck=drawn.deck,
                                  count=check.count, t=t)]
        hand = self.hand
        if hand is None or hand.ended:
            return [CardIgnored(card=drawn.card, deck=drawn.deck,
                                reason="no hand in progress: insert the deck to start one",
                                hand=hand.number if hand is not None else None, t=t)]
        events: list[Event] = []
        if (hand.draws == 0 and self.profile.choice(LEVEL_CHANGE_TIMING)
                is LevelChangeTiming.FIRST_CARD):
            level = self.clock.current_level() if self.clock is not None else None
            if level != hand.level:
                hand.level = level
                hand.blinds = self.clock.current_blinds() if self.clock is not None else None
                events.append(HandLevel(hand=hand.number, level=level, t=t,
                                        blinds=hand.blinds))
        events += hand.draw(drawn, t)
        if hand.ended:
            events = self._after(events, t)
        return events

    def _gesture(self, gesture: str, t: float) -> list[Event]:
        action = _GESTURE_ACTION[self.config.gestures.get(gesture, "ignore")]
        hand = self.hand if self.hand_in_progress else None
        if action is GestureAction.CLOSE_ROUND:
            events = self._cancel_shot(t, "round closed")
            if hand is not None and hand.nothing_dealt and self.declares_game:
                events += self._declare_for_hand(hand, t)  # seed 004: "prior to dealing"
            elif hand is not None:
                events += hand.tap(t)
            elif self.declares_game and self.deck_check is None:
                events += self.choice.tap_between_hands(t)  # between hands: the next game
            return events
        if action is GestureAction.END_HAND:
            if hand is None or hand.nothing_dealt:
                # The next deck came before the dealer's double tap: the tap belongs to the
                # hand that the deck already ended, not to this one (nothing dealt yet).
                return []
            return self._after(hand.finish(t, "double_tap"), t)
        if action is GestureAction.SHOT_CLOCK:
            if self.shot.running is not None:
                return self._cancel_shot(t, "cancelled by the dealer")
            seconds, countdown = self.profile.shot_clock
            return self.shot.start(seconds, countdown, self._active_number(), t)
        if action is GestureAction.CALL_FLOOR:
            return [FloorCalled(hand=self._active_number(), t=t)]
        return []

    def _cancel_shot(self, t: float, why: str) -> list[Event]:
        return self.shot.cancel(why, self._active_number(), t)

    def _after(self, events: list[Event], t: float) -> list[Event]:
        """Close the books on a hand that just ended: record, button, deferred seating."""
        hand = self.hand
        assert hand is not None and hand.ended
        ended = next(e for e in reversed(events) if isinstance(e, HandEnded))
        events.append(hand_record(ended, hand.game, list(hand.positions.seats),
                                  hand.positions.button, hand.scramble is None,
                                  evaluate=self.config.evaluate))
        self.last_outcome = hand.outcome
        assert hand.outcome is not None
        self.shift.hand_over(hand.outcome)
        events += self.hand_for_hand.hand_over(hand.outcome, hand.number, t)
        events += self._cancel_shot(t, "hand over")
        if self.pending_setup is not None:
            setup, self.pending_setup = self.pending_setup, None
            self._apply_setup(setup)
        if self.pending_seats is not None:
            self.seats, self.pending_seats = self.pending_seats, None
            self.seating_version = self.pending_seating_version or 0
            self.pending_seating_version = None
        return events

    def _deck_check(self, item: DeckCheckCommand, t: float) -> list[Event]:
        if item.action == DeckCheckAction.START:
            if self.hand_in_progress:
                raise TableUsageError("a deck check cannot start while a hand is in progress: "
                                      "end the hand (double tap) first")
            assert item.deck is not None
            self.deck_check = DeckCheck(item.deck, self.registry)
            self._rereads.forget()
            return [DeckCheckStarted(deck=item.deck,
                                     text=f"DECK CHECK {item.deck}: run every card through", t=t)]
        check = self.deck_check
        if check is None:
            raise TableUsageError(f"deck check {item.action}: no deck check is running")
        self.deck_check = None
        if item.action == DeckCheckAction.CANCEL:
            return [DeckCheckCancelled(deck=check.deck, t=t)]
        return [check.result().as_event(t)]

    # ------------------------------------------------------------------ clock and shoe

    def _structure(self, name: str) -> Structure:
        try:
            return self.structure_loader(name)
        except ValueError as exc:  # the structure named by the caller cannot be used
            raise TableUsageError(str(exc)) from None

    def _clock(self, item: ClockCommand, t: float) -> list[Event]:
        if item.action == ClockAction.START:
            assert item.structure is not None
            structure = self._structure(item.structure)
            self.clock = BlindClock(structure, t)
            self.clock_source = "table"
            return [ClockChanged(state="running", structure=structure.name, elapsed=0.0, t=t),
                    *self.clock.advance(t)]
        if item.action == ClockAction.SYNC:
            assert item.structure is not None and item.elapsed is not None
            self.clock_source = "venue"
            if self.clock is None or self.clock.structure.name != item.structure:
                self.clock = BlindClock(self._structure(item.structure), t)
            return self.clock.sync(item.elapsed, item.running, t)
        if self.clock is None:
            raise TableUsageError(f"clock {item.action}: no clock is running; start one with "
                                  "a structure first")
        if item.action == ClockAction.PAUSE:
            return self.clock.pause(t)
        if item.action == ClockAction.RESUME:
            return self.clock.resume(t)
        return self.clock.stop(t)

    def _shoe(self, item: ShoeStatus, t: float) -> list[Event]:
        if item.state == ShoeState.READS_LOST:
            return self._reads_lost(item, t)
        previous, self.shoe_state = self.shoe_state, item.state
        resumed = (item.state == ShoeState.OK and previous != ShoeState.OK
                   and self.hand_in_progress)
        events: list[Event] = [ShoeChanged(state=item.state, hand=self._active_number(), t=t,
                                           detail=item.detail or None,
                                           resumed=True if resumed else None)]
        if item.state != ShoeState.OK and previous == ShoeState.OK and self.hand_in_progress:
            assert self.hand is not None
            events += self.hand.shoe_fault(item.state, item.part, item.detail, t)
        return events

    def _reads_lost(self, item: ShoeStatus, t: float) -> list[Event]:
        """The shoe dropped messages it could not deliver: the hand in progress lacks reads
        that happened at the table; only the floor can say what was dealt."""
        events: list[Event] = [ShoeReadsLost(lost=item.lost, cards=item.cards,
                                             hand=self._active_number(), t=t,
                                             detail=item.detail or None)]
        if self.hand_in_progress:
            assert self.hand is not None
            events += self.hand.reads_lost(item.lost or 0, item.cards, item.detail, t)
        return events

    def clock_state(self) -> dict[str, Any] | None:
        """The clock's part of ``state`` alone (what the display reads each tick)."""
        return self.clock.snapshot(self.now) if self.clock is not None else None

    def state(self) -> dict[str, Any]:
        """A snapshot for late joiners and the display's status line."""
        hand = self.hand
        return {
            "hand": hand.number if hand is not None else None,
            "in_progress": self.hand_in_progress,
            "street": hand.street if hand is not None and not hand.ended else None,
            "phase": hand.shown_phase.value if hand is not None else None,
            "dealer": self.shift.dealer,
            "shoe": self.shoe_state,
            "clock": self.clock_state(),
            "profile": self.profile.name,
            "hand_for_hand": self.hand_for_hand.state,
            "seats": list(self.seats or ()),
            # The hub's seating versions: the one dealt, the one held for the next hand.
            "seating": {"version": self.seating_version,
                        "pending": self.pending_seating_version},
            # Where the floor looks on its seat map: the hand's button and blinds.
            "button": hand.positions.button if hand is not None else self.setup_button,
            "blind_seats": {"small": hand.positions.small_blind,
                            "big": hand.positions.big_blind} if hand is not None else None,
            "dealer_stats": self.shift.summary(self.now).to_json() if self.shift.dealer else None,
        }
