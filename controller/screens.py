"""What the table's display shows, decided from the core's events and the time. Pure.

``DisplayModel.update(event)`` follows the events; ``DisplayModel.screen(t, ...)`` says which
screen to show now. Screens, most urgent first: the shot clock, a ruling or alert, the deck
check, an announcement, hand-for-hand, the game declared (dealer's choice), a break, the clock.
Every screen has a status line: hand number, shoe link, hub link, dealer.

All text is ASCII (a character LCD shows it as is) and short enough for a 20-column line; the
renderers (``hardware/display.py``) lay it out for a 128x64 OLED or a 20x4 LCD.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LCD_WIDTH = 20


@dataclass(frozen=True)
class Screen:
    kind: str  # clock, break, alert, deck_check, shot_clock, hand_for_hand, game, announcement
    title: str
    big: str
    lines: tuple[str, ...] = ()
    status: str = ""
    inverted: bool = False  # alerts: white background, to catch the eye


@dataclass
class Status:
    hand: int | None = None
    shoe: str = "ok"  # ok, lost, fault
    hub: str | None = None  # ok, lost; None: no hub configured (standalone)
    dealer: str | None = None

    def line(self) -> str:
        parts = [f"#{self.hand}" if self.hand is not None else "#-",
                 f"SHOE {'ok' if self.shoe == 'ok' else 'LOST' if self.shoe == 'lost' else 'ERR'}"]
        if self.hub is not None:
            parts.append(f"HUB {'ok' if self.hub == 'ok' else 'LOST'}")
        text = " ".join(parts)
        if self.dealer and len(text) + 1 + len(self.dealer) <= LCD_WIDTH:
            text += " " + self.dealer
        return text[:LCD_WIDTH]


def wrap(text: str, width: int = LCD_WIDTH, limit: int = 4) -> tuple[str, ...]:
    """Words into lines of at most ``width`` characters (long words are cut)."""
    lines: list[str] = []
    current = ""
    for word in text.replace(" - ", " ").split():
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
    return tuple(lines[:limit])


def split_alert(text: str, fallback: str) -> tuple[str, str]:
    """A ruling's text "MISDEAL: 2nd card exposed - ..." as title and body."""
    head, sep, body = text.partition(": ")
    if sep and len(head) <= LCD_WIDTH:
        return head, body
    return fallback[:LCD_WIDTH], text


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


@dataclass
class DisplayModel:
    alert_seconds: float = 20.0
    announcement_seconds: float = 15.0
    level: dict[str, Any] | None = None
    on_break: bool = False
    alert: tuple[str, str, float] | None = None  # (title, text, until)
    shot: tuple[float, float, float] | None = None  # (started, seconds, countdown)
    deck_check: dict[str, Any] | None = None
    deck_check_until: float = 0.0
    announcement: tuple[str, float] | None = None
    hand_for_hand: str | None = None  # waiting, playing; None: off
    game: str | None = None
    status: Status = field(default_factory=Status)

    def update(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        t = float(event.get("t") or 0.0)
        if kind == "level":
            self.level = event
            self.on_break = False
        elif kind == "break":
            self.on_break = event.get("state") == "started"
        elif kind == "ruling":
            title, body = split_alert(str(event.get("text", "")),
                                      str(event.get("action", "")).replace("_", " ").upper())
            self.alert = (title, body, t + self.alert_seconds)
        elif kind == "floor.called":
            self.alert = ("FLOOR", "Floor called to this table", t + self.alert_seconds)
        elif kind == "shot_clock":
            if event.get("state") == "started":
                self.shot = (t, float(event["seconds"]), float(event["countdown"]))
            elif event.get("state") in ("cancelled", "expired"):
                self.shot = None
                if event.get("state") == "expired":
                    self.alert = ("TIME", "Clock expired: the hand is dead",
                                  t + self.alert_seconds)
        elif kind == "deck_check.started":
            self.deck_check = event
            self.deck_check_until = float("inf")
        elif kind == "deck_check.card" and self.deck_check is not None:
            self.deck_check = {**self.deck_check, "count": event.get("count")}
        elif kind == "deck_check.result":
            self.deck_check = event
            self.deck_check_until = t + self.alert_seconds
        elif kind == "deck_check.cancelled":
            self.deck_check = None
        elif kind == "announcement":
            self.announcement = (str(event.get("text", "")), t + self.announcement_seconds)
        elif kind == "hand_for_hand":
            state = event.get("state")
            self.hand_for_hand = None if state == "off" else str(state)
        elif kind == "game.declared":
            self.game = str(event.get("label") or event.get("game"))
        elif kind == "hand.started":
            self.status.hand = int(event["hand"])
            self.alert = None
            if self.hand_for_hand == "waiting":
                self.hand_for_hand = "playing"
        elif kind == "shoe" and event.get("state") != "reads_lost":  # an event, not a state
            self.status.shoe = str(event.get("state"))
        elif kind == "dealer":
            self.status.dealer = event.get("dealer")

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
        if self.alert is not None and t < self.alert[2]:
            title, text, _ = self.alert
            return Screen("alert", title, "", wrap(text, limit=4), status, inverted=True)
        if self.deck_check is not None and t < self.deck_check_until:
            check = self.deck_check
            if check.get("type") == "deck_check.result":
                text = str(check.get("text", ""))
                verdict = wrap(text.split(": ", 1)[-1], limit=3)
                return Screen("deck_check", f"DECK {check['deck']}",
                              "OK" if check.get("ok") else "BAD", verdict, status,
                              inverted=not check.get("ok"))
            return Screen("deck_check", f"DECK CHECK {check.get('deck')}",
                          str(check.get("count") or 0), ("Run the deck through",), status)
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
            nxt = self.level.get("next") if self.level else None
            after = (f"Next {blinds(nxt['sb'], nxt['bb'], nxt['ante'], LCD_WIDTH - 5)}",) \
                if nxt else ()
            return Screen("break", "BREAK", mmss(remaining or 0), after, status)
        if self.level is None:
            title = "NO CLOCK"
            big = "--:--"
            lines: tuple[str, ...] = ("Blind clock not started",)
        else:
            level = self.level
            head = f"LVL {level['level']} "
            title = head + blinds(level["sb"], level["bb"], level["ante"],
                                  LCD_WIDTH - len(head))
            big = mmss(remaining or 0) if remaining is not None else "--:--"
            nxt = level.get("next")
            if level.get("break_next"):
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


def sample_screens() -> dict[str, Screen]:
    """One of each screen, for ``tablectl render`` and the golden-image tests."""
    status = Status(hand=42, shoe="ok", hub="ok", dealer="D17").line()
    return {
        "clock": Screen("clock", "LVL 3 250/500", "14:59", ("Next 500/1000",), status),
        "clock-antes": Screen("clock", "LVL 9 " + blinds(2500, 5000, 1000, 14), "07:03",
                              ("Next " + blinds(5000, 10000, 2000, 15),), status),
        "break": Screen("break", "BREAK", "09:30", ("Next 300/600 a600",), status),
        "alert-misdeal": Screen("alert", "MISDEAL", "", wrap(
            "2nd card exposed - reshuffle, button stays"), status, inverted=True),
        "alert-exposed": Screen("alert", "EXPOSED Qs seat 4", "", wrap(
            "deal on; after the deal seat 4 gets the next card; Qs is the flop burn"), status,
            inverted=True),
        "alert-premature": Screen("alert", "PREMATURE TURN", "", wrap(
            "card out of play; after betting burn and turn; reshuffle it in before the river, "
            "no burn"), status, inverted=True),
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
