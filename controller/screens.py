"""What the table's display shows, decided from the core's events and the time. Pure.

``DisplayModel.update(event)`` follows the events; ``DisplayModel.screen(t, ...)`` says which
screen to show now. Screens, most urgent first: the shot clock, a ruling or alert, the deck
check, an announcement, hand-for-hand, the game declared (dealer's choice), a break, the clock.
Every screen has a status line: hand number, shoe link, hub link, dealer.

All text is ASCII (a character LCD shows it as is) and short enough for a 20-column line; the
renderers (``hardware/display.py``) lay it out for a 128x64 OLED or a 20x4 LCD.

A ruling is never cut: its text is paged, as many lines a page as the display holds under the
title (``ALERT_LINES``), each page long enough to read (``page_seconds``), the pages in turn
until every one has been shown twice (and at least ``alert_seconds``). The title carries the
page ("1/3"); rulings put their most important words first (the title, then the action).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from controller.events import (
    Announcement,
    BreakEnded,
    BreakStarted,
    DealerSignedIn,
    DeckCheckCancelled,
    DeckCheckCard,
    DeckCheckResult,
    DeckCheckStarted,
    Event,
    FloorCalled,
    GameDeclared,
    HandForHandChanged,
    HandStarted,
    Level,
    Ruling,
    RulingAction,
    Seating,
    ShoeChanged,
    ShoeFaultRuling,
    ShoeState,
    ShotClock,
)

LCD_WIDTH = 20
# Lines of text under an alert's title: the OLED has five, a 20x4 LCD two (title and status
# take the other rows).
ALERT_LINES = {"oled": 5, "lcd": 2}
PAGE_SECONDS_MIN = 3.0
PAGE_SECONDS_PER_WORD = 0.4  # a dealer glancing between actions reads ~150 words a minute


def page_seconds(lines: tuple[str, ...]) -> float:
    """How long a page of text stays up: long enough to read every word on it."""
    words = sum(len(line.split()) for line in lines)
    return max(PAGE_SECONDS_MIN, 1.0 + PAGE_SECONDS_PER_WORD * words)


@dataclass(frozen=True)
class Alert:
    """A ruling or alert on screen: its title and its text in pages, shown in turn."""

    title: str
    pages: tuple[tuple[str, ...], ...]
    started: float
    until: float
    lines_per_page: int = ALERT_LINES["oled"]
    cause: str | None = None  # "shoe_link": cleared as soon as the shoe is back

    @classmethod
    def of(cls, title: str, text: str, t: float, lines_per_page: int,
           at_least: float, cause: str | None = None) -> Alert:
        return cls.of_lines(title, wrap(text, limit=None) or ("",), t, lines_per_page,
                            at_least, cause)

    @classmethod
    def of_lines(cls, title: str, lines: tuple[str, ...], t: float, lines_per_page: int,
                 at_least: float, cause: str | None = None) -> Alert:
        """The alert of a text already wrapped (``of``; a snapshot keeps the lines)."""
        lines = lines or ("",)
        pages = tuple(lines[i:i + lines_per_page] for i in range(0, len(lines), lines_per_page))
        cycle = sum(page_seconds(page) for page in pages)
        return cls(title, pages, t, t + max(at_least, 2 * cycle if len(pages) > 1 else cycle),
                   lines_per_page, cause)

    def page_at(self, t: float) -> int:
        cycle = sum(page_seconds(page) for page in self.pages)
        offset = (t - self.started) % cycle if cycle > 0 else 0.0
        for index, page in enumerate(self.pages):
            offset -= page_seconds(page)
            if offset < 0:
                return index
        return len(self.pages) - 1

    def screen(self, t: float, status: str) -> Screen:
        index = self.page_at(t)
        title, lines = self.title, self.pages[index]
        if len(self.pages) > 1:
            # The page mark goes where it cuts nothing: after the title, on a free line, or
            # at the end of the last line.
            mark = f"{index + 1}/{len(self.pages)}"
            if len(title) + 1 + len(mark) <= LCD_WIDTH:
                title = f"{title} {mark}"
            elif len(lines) < self.lines_per_page:
                lines = (*lines, mark.rjust(LCD_WIDTH))
            elif len(lines[-1]) + 1 + len(mark) <= LCD_WIDTH:
                lines = (*lines[:-1], lines[-1] + mark.rjust(LCD_WIDTH - len(lines[-1])))
        return Screen("alert", title, "", lines, status, inverted=True)


@dataclass(frozen=True)
class Screen:
    kind: str  # clock, break, alert, deck_check, shot_clock, hand_for_hand, game, announcement
    title: str
    big: str
    lines: tuple[str, ...] = ()
    status: str = ""
    inverted: bool = False  # alerts: white background, to catch the eye


_SHOE_SHOWN = {ShoeState.OK: "ok", ShoeState.LOST: "LOST"}  # any other: ERR


@dataclass
class Status:
    hand: int | None = None
    shoe: ShoeState = ShoeState.OK  # ok, lost, fault
    hub: str | None = None  # ok, lost, connecting; None: no hub configured (standalone)
    dealer: str | None = None

    def line(self) -> str:
        parts = [f"#{self.hand}" if self.hand is not None else "#-",
                 f"SHOE {_SHOE_SHOWN.get(self.shoe, 'ERR')}"]
        if self.hub is not None:
            parts.append("HUB " + {"ok": "ok", "connecting": ".."}.get(self.hub, "LOST"))
        text = " ".join(parts)
        if self.dealer and len(text) + 1 + len(self.dealer) <= LCD_WIDTH:
            text += " " + self.dealer
        return text[:LCD_WIDTH]


def wrap(text: str, width: int = LCD_WIDTH, limit: int | None = 4) -> tuple[str, ...]:
    """Words into lines of at most ``width`` characters (long words are cut); the first
    ``limit`` lines (all with None)."""
    lines: list[str] = []
    current = ""
    # "A - B" in a ruling reads "A; B" on the display: the dash alone reads as a word.
    for word in text.replace(" - ", "; ").split():
        while len(word) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:width])
            word = word[width:]
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return tuple(lines if limit is None else lines[:limit])


def split_alert(text: str, fallback: str) -> tuple[str, str]:
    """A ruling's text "MISDEAL: 2nd card exposed - ..." as title and body."""
    head, sep, body = text.partition(": ")
    if sep and len(head) <= LCD_WIDTH:
        return head, body
    return fallback[:LCD_WIDTH], text


def seating_notice(moves: list[dict[str, Any]], seats: list[int],
                   effective: str) -> tuple[str, str]:
    """Who the floor moves between tables, as the dealer reads it: the title, then one
    sentence a player ("Seat 6 to table t2 seat 5.", "Seat 5 new from t1 seat 6.")."""
    leaving = [m for m in moves if "to_table" in m]
    arriving = [m for m in moves if "from_table" in m]
    if not seats:
        title = "TABLE BREAKS"
    elif leaving and arriving:
        title = "PLAYERS MOVE"
    elif leaving:
        title = "PLAYER MOVES" if len(leaving) == 1 else "PLAYERS MOVE"
    else:
        title = "NEW PLAYER" if len(arriving) == 1 else "NEW PLAYERS"
    def who(m: dict[str, Any]) -> str:  # the roster's name first, when the hub sent one
        return f"{m['player']}: seat" if m.get("player") else "Seat"

    parts = [f"{who(m)} {m['seat']} to table {m['to_table']} seat {m['to_seat']}."
             for m in leaving]
    parts += [f"{who(m)} {m['seat']} new from {m['from_table']} seat {m['from_seat']}."
              for m in arriving]
    if effective == "next_hand":
        parts.append("After this hand.")
    return title, " ".join(parts)


def mmss(seconds: float) -> str:
    seconds = max(0, int(seconds + 0.999))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}"
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def blinds(sb: Any, bb: Any, ante: Any, width: int = LCD_WIDTH) -> str:
    """Blinds and ante as a dealer reads them: 500/1000 a100; in thousands (5k/10k a2k) once a
    figure reaches 10,000 or the full figures do not fit ``width``."""
    def text(thousands: bool) -> str:
        def short(value: Any) -> str:
            number = int(value or 0)
            if thousands and number >= 1000 and number % 100 == 0:
                return f"{number / 1000:g}k"
            return str(number)

        return f"{short(sb)}/{short(bb)}" + (f" a{short(ante)}" if ante else "")

    full = text(False)
    if len(full) <= width and max(int(sb or 0), int(bb or 0), int(ante or 0)) < 10000:
        return full
    return text(True)


@dataclass(frozen=True)
class DeckCheckShown:
    """The deck check on the display: running (``ok`` None) or its result."""

    deck: str
    count: int = 0
    ok: bool | None = None
    text: str = ""


@dataclass
class DisplayModel:
    alert_seconds: float = 20.0
    announcement_seconds: float = 15.0
    alert_lines: int = ALERT_LINES["oled"]  # lines a page under an alert's title
    level: Level | None = None
    on_break: bool = False
    alert: Alert | None = None
    shot: tuple[float, float, float] | None = None  # (started, seconds, countdown)
    deck_check: DeckCheckShown | None = None
    deck_check_until: float = 0.0
    announcement: tuple[str, float] | None = None
    hand_for_hand: str | None = None  # waiting, playing; None: off
    game: str | None = None
    status: Status = field(default_factory=Status)

    def update(self, event: Event) -> None:
        t = getattr(event, "t", 0.0)
        match event:
            case Level():
                self.level = event
                self.on_break = False
            case BreakStarted():
                self.on_break = True
            case BreakEnded():
                self.on_break = False
            case Ruling(text=text, action=action):
                title, body = split_alert(text, action.replace("_", " ").upper())
                # A lost link or a faulty part is over when the shoe is back; lost reads and
                # a restart's lost queue are not: the floor must still check the hand.
                link = (isinstance(event, ShoeFaultRuling)
                        and event.part not in ("reads", "restart"))
                self._alert(title, body, t, "shoe_link" if link else None)
            case FloorCalled():
                self._alert("FLOOR", "Floor called to this table", t)
            case ShotClock(state="started", seconds=seconds, countdown=countdown):
                self.shot = (t, float(seconds or 0), float(countdown or 0))
            case ShotClock(state="cancelled"):
                self.shot = None
            case ShotClock(state="expired"):
                self.shot = None
                self._alert("TIME", "Clock expired: the hand is dead", t)
            case DeckCheckStarted(deck=deck):
                self.deck_check = DeckCheckShown(deck)
                self.deck_check_until = float("inf")
            case DeckCheckCard(count=count) if self.deck_check is not None:
                self.deck_check = replace(self.deck_check, count=count)
            case DeckCheckResult(deck=deck, count=count, ok=ok, text=text):
                self.deck_check = DeckCheckShown(deck, count, ok, text)
                self.deck_check_until = t + self.alert_seconds
            case DeckCheckCancelled():
                self.deck_check = None
            case Announcement(text=text):
                self.announcement = (text, t + self.announcement_seconds)
            case HandForHandChanged(state=state):
                self.hand_for_hand = None if state == "off" else state
            case GameDeclared(label=label, game=game):
                self.game = label or game
            case Seating(moves=[_, *_] as moves, seats=seats, effective=effective):
                self._alert(*seating_notice(moves, seats, effective), t, "seating")
            case HandStarted(hand=hand):
                self.status.hand = hand
                if self.alert is None or self.alert.cause != "seating":
                    self.alert = None  # a ruling is the last hand's; who moves still matters
                if self.hand_for_hand == "waiting":
                    self.hand_for_hand = "playing"
            case ShoeChanged(state=state):  # lost reads are an event, not the shoe's state
                self.status.shoe = state
                if (state == ShoeState.OK and self.alert is not None
                        and self.alert.cause == "shoe_link"):
                    self.alert = None  # "SHOE LINK LOST" must not outlive the link's return
            case DealerSignedIn(dealer=dealer):
                self.status.dealer = dealer

    def _alert(self, title: str, text: str, t: float, cause: str | None = None) -> None:
        self.alert = Alert.of(title, text, t, self.alert_lines, self.alert_seconds, cause)

    def screen(self, t: float, clock: dict[str, Any] | None = None,
               clock_time: float | None = None) -> Screen:
        """The screen for time ``t``. ``clock`` is the table's clock snapshot taken at
        ``clock_time`` (its ``remaining`` counts down from then while it runs)."""
        status = self.status.line()
        if self.shot is not None:
            started, seconds, countdown = self.shot
            left = started + seconds + countdown - t
            if left > 0:
                counting = left <= countdown
                return Screen("shot_clock", "CLOCK CALLED" if not counting else "COUNTDOWN",
                              str(int(left + 0.999)), ("Act now" if counting else
                                                       "Player to act",), status,
                              inverted=counting)
        if self.alert is not None and t < self.alert.until:
            return self.alert.screen(t, status)
        if self.deck_check is not None and t < self.deck_check_until:
            check = self.deck_check
            if check.ok is not None:
                verdict = wrap(check.text.split(": ", 1)[-1], limit=3)
                return Screen("deck_check", f"DECK {check.deck}", "OK" if check.ok else "BAD",
                              verdict, status, inverted=not check.ok)
            return Screen("deck_check", f"DECK CHECK {check.deck}", str(check.count or 0),
                          ("Run the deck through",), status)
        if self.announcement is not None and t < self.announcement[1]:
            return Screen("announcement", "ANNOUNCE", "", wrap(self.announcement[0], limit=4),
                          status)
        if self.hand_for_hand == "waiting":
            return Screen("hand_for_hand", "HAND FOR HAND", "WAIT",
                          ("Wait for the floor",), status, inverted=True)
        remaining = None
        if clock is not None:
            remaining = float(clock.get("remaining", 0.0))
            if clock.get("running") and clock_time is not None:
                remaining -= t - clock_time
        if self.on_break:
            nxt = self.level.next if self.level else None
            after = (f"Next {blinds(nxt['sb'], nxt['bb'], nxt['ante'], LCD_WIDTH - 5)}",) \
                if nxt else ()
            return Screen("break", "BREAK", mmss(remaining or 0), after, status)
        if self.level is None:
            title = "NO CLOCK"
            big = "--:--"
            lines: tuple[str, ...] = ("Blind clock not started",)
        else:
            level = self.level
            head = f"LVL {level.level} "
            title = head + blinds(level.sb, level.bb, level.ante, LCD_WIDTH - len(head))
            big = mmss(remaining or 0) if remaining is not None else "--:--"
            nxt = level.next
            if level.break_next:
                lines = ("Next: BREAK",)
            elif nxt:
                lines = (f"Next {blinds(nxt['sb'], nxt['bb'], nxt['ante'], LCD_WIDTH - 5)}",)
            else:
                lines = ("Last level",)
            if clock is not None and not clock.get("running"):
                lines = ("PAUSED",)
        if self.hand_for_hand == "playing":
            lines = ("HAND FOR HAND",)
        if self.game:
            lines = (self.game,)  # dealer's choice: the game declared matters more
        return Screen("clock", title[:LCD_WIDTH], big, lines, status)


# Rulings as the core words them, for the sample screens: short, long, and longest.
SAMPLE_RULINGS = {
    "alert-misdeal": (RulingAction.MISDEAL,
                      "MISDEAL: 2nd card exposed - reshuffle, button stays"),
    "alert-exposed": (RulingAction.REPLACE_EXPOSED, "EXPOSED Qs seat 4: deal on; after the "
                      "deal seat 4 gets the next card; Qs is the flop burn"),
    "alert-premature": (RulingAction.SET_ASIDE_TURN, "PREMATURE TURN: card out of play; after "
                        "betting burn and turn; reshuffle it in before the river, no burn"),
    "alert-reads-lost": (RulingAction.CALL_FLOOR, "12 CARD READS LOST: call the floor; check "
                         "every seat and the board"),
}
# Players moved by the floor, for the sample screens: one leaving (named by the hub's
# roster), one arriving.
SAMPLE_MOVES = {
    "seating-player-moves": ([{"seat": 6, "to_table": "t2", "to_seat": 5, "player": "Anna"}],
                             [1, 2, 3, 4, 5, 7, 8, 9]),
    "seating-new-player": ([{"seat": 5, "from_table": "t1", "from_seat": 6}],
                           [1, 2, 3, 4, 5, 6, 7, 8]),
}


def sample_screens(device: str = "oled") -> dict[str, Screen]:
    """One of each screen as ``device`` (``oled`` or ``lcd``) shows it, for ``tablectl render``
    and the golden-image tests; a ruling in more than one page gives one screen a page
    (``alert-premature-p1``, ``-p2``...)."""
    status = Status(hand=42, shoe=ShoeState.OK, hub="ok", dealer="D17").line()
    screens = _fixed_samples(status)
    for name, (action, text) in SAMPLE_RULINGS.items():
        model = DisplayModel(alert_lines=ALERT_LINES[device])
        model.update(Ruling(hand=1, action=action, text=text, profile="sample", t=0.0))
        alert = model.alert
        assert alert is not None
        t = 0.0
        for index, page in enumerate(alert.pages):
            key = name if len(alert.pages) == 1 else f"{name}-p{index + 1}"
            screens[key] = alert.screen(t, status)
            t += page_seconds(page)
    for name, (moves, seats) in SAMPLE_MOVES.items():
        model = DisplayModel(alert_lines=ALERT_LINES[device])
        model.update(Seating(seats=seats, effective="now", moves=moves, t=0.0))
        assert model.alert is not None and len(model.alert.pages) == 1
        screens[name] = model.alert.screen(0.0, status)
    return dict(sorted(screens.items()))


def _fixed_samples(status: str) -> dict[str, Screen]:
    return {
        "clock": Screen("clock", "LVL 3 250/500", "14:59", ("Next 500/1000",), status),
        "clock-antes": Screen("clock", "LVL 9 " + blinds(2500, 5000, 1000, 14), "07:03",
                              ("Next " + blinds(5000, 10000, 2000, 15),), status),
        "break": Screen("break", "BREAK", "09:30", ("Next 300/600 a600",), status),
        "deck-check-running": Screen("deck_check", "DECK CHECK R1", "37",
                                     ("Run the deck through",), status),
        "deck-check-ok": Screen("deck_check", "DECK R1", "OK", ("52 cards",), status),
        "deck-check-bad": Screen("deck_check", "DECK R1", "BAD",
                                 wrap("missing As 7d; twice Kc; foreign B2:Qh", limit=3),
                                 status, inverted=True),
        "shot-clock": Screen("shot_clock", "CLOCK CALLED", "25", ("Player to act",), status),
        "shot-clock-countdown": Screen("shot_clock", "COUNTDOWN", "4", ("Act now",), status,
                                       inverted=True),
        "hand-for-hand": Screen("hand_for_hand", "HAND FOR HAND", "WAIT",
                                ("Wait for the floor",), status, inverted=True),
        "announcement": Screen("announcement", "ANNOUNCE", "", wrap(
            "Colour up: red 50 chips out after this level. Late registration closes."),
            status),
        "game": Screen("clock", "LVL 2 50/100", "11:20", ("OMAHA HI/LO PL",), status),
    }
