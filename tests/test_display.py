"""The display: every screen through luma's real drivers over fake I2C buses that emulate the
controllers, against golden images (OLED) and golden text (LCD); and the display model that
chooses the screen from the core's events."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from PIL import Image

from controller.events import (
    BreakEnded,
    BreakStarted,
    DeckCheckCard,
    DeckCheckResult,
    DeckCheckStarted,
    GameDeclared,
    HandForHandChanged,
    HandStarted,
    Level,
    Ruling,
    RulingAction,
    RulingReason,
    ShoeChanged,
    ShoeReadsLost,
    ShotClock,
)
from controller.screens import DisplayModel, Screen, sample_screens
from hardware.display import Display, lcd_device, oled_device, render_lcd, render_oled
from simulators.fake_i2c import LcdBus, OledBus

GOLDEN = Path(__file__).parent / "golden"
SCREENS = sample_screens("oled")
LCD_SCREENS = sample_screens("lcd")


def _pixels(image):
    return image.convert("1").tobytes()


@pytest.fixture(scope="module")
def lcd():
    bus = LcdBus()
    return Display(lcd_device(bus=bus)), bus


@pytest.mark.parametrize("name", sorted(SCREENS))
def test_oled_golden_through_the_ssd1306_driver(name):
    bus = OledBus()
    display = Display(oled_device("ssd1306", bus=bus))
    display.show(SCREENS[name])
    golden = Image.open(GOLDEN / f"{name}.oled.png")
    assert bus.display_on
    assert _pixels(bus.image()) == _pixels(golden), (
        f"{name}: the OLED differs from tests/golden; if the change is meant, regenerate with "
        "`tablectl render --all --golden --out tests/golden`")


@pytest.mark.parametrize("name", ["clock", "alert-misdeal", "shot-clock-countdown"])
def test_oled_golden_through_the_sh1106_driver(name):
    bus = OledBus(sh1106=True)
    Display(oled_device("sh1106", bus=bus)).show(SCREENS[name])
    assert _pixels(bus.image()) == _pixels(Image.open(GOLDEN / f"{name}.oled.png"))


@pytest.mark.parametrize("name", sorted(LCD_SCREENS))
def test_lcd_golden_through_the_hd44780_driver(lcd, name):
    display, bus = lcd
    display.show(LCD_SCREENS[name])
    golden = (GOLDEN / f"{name}.lcd.txt").read_text(encoding="ascii").splitlines()
    assert bus.lines() == golden
    assert bus.backlight


def test_only_changes_are_pushed():
    bus = OledBus()
    display = Display(oled_device("ssd1306", bus=bus))
    assert display.show(SCREENS["clock"])
    writes = bus.writes
    assert not display.show(SCREENS["clock"])
    assert bus.writes == writes


@pytest.mark.parametrize("kind", ["ssd1306", "sh1106"])
def test_a_frame_sends_only_what_changed_and_the_glass_matches_lumas_whole_push(kind):
    """Every sample screen after every other (and the clock ticking a minute), each pushed as
    the changed columns only: the emulated glass then holds exactly what luma's own driver
    pushing the frame whole gives on a bus of its own, and a clock's tick sends a fraction of
    a whole frame."""
    from dataclasses import replace

    from controller.screens import mmss

    sh1106 = kind == "sh1106"
    bus, reference_bus = OledBus(sh1106=sh1106), OledBus(sh1106=sh1106)
    display = Display(oled_device(kind, bus=bus))
    reference = oled_device(kind, bus=reference_bus)
    names = sorted(SCREENS)
    screens = [SCREENS[n] for n in names + names[::-1]]
    screens += [replace(SCREENS["clock"], big=mmss(900 - i)) for i in range(60)]
    for screen in screens:
        display.show(screen)
        reference.display(render_oled(screen).convert("1"))
        assert bus.ram == reference_bus.ram, screen
    before, whole = bus.bytes, reference_bus.bytes
    display.show(replace(SCREENS["clock"], big=mmss(830)))
    reference.display(render_oled(replace(SCREENS["clock"], big=mmss(830))).convert("1"))
    assert bus.ram == reference_bus.ram
    assert bus.bytes - before < (reference_bus.bytes - whole) / 2
    # force: whole again, whatever the glass was thought to hold
    bus.ram[3][40] ^= 0xFF  # a glitch on the line
    display.show(SCREENS["clock"], force=True)
    reference.display(render_oled(SCREENS["clock"]).convert("1"))
    assert bus.ram == reference_bus.ram


def test_every_line_fits_the_lcd():
    for screen in SCREENS.values():
        assert all(len(line) == 20 for line in render_lcd(screen))
        assert render_oled(screen).size == (128, 64)


def _started(hand: int, t: float) -> HandStarted:
    return HandStarted(hand=hand, game="holdem", button=1, seats=[1, 2], level=3,
                       small_blind=2, big_blind=1, dead_button=False, deck="R1", redeal=0,
                       dealer=None, t=t)


def _ruling(action: str, text: str, t: float, reason: str | None = None, **fields) -> Ruling:
    return Ruling.of(RulingAction(action), RulingReason(reason) if reason else None)(
        hand=7, action=RulingAction(action), reason=reason, text=text, profile="tda-2024", t=t,
        **fields)


def _clock_events():
    return [
        Level(level=3, sb=250, bb=500, ante=0, minutes=15,
              next={"level": 4, "sb": 500, "bb": 1000, "ante": 0}, break_next=False, t=0),
        _started(7, 10),
    ]


def test_model_shows_the_clock_counting_down():
    model = DisplayModel()
    for event in _clock_events():
        model.update(event)
    clock = {"remaining": 900.0, "running": True}
    screen = model.screen(100.0, clock, clock_time=0.0)
    assert (screen.kind, screen.title, screen.big) == ("clock", "LVL 3 250/500", "13:20")
    assert screen.lines == ("Next 500/1000",) and screen.status.startswith("#7 SHOE ok")
    paused = model.screen(100.0, {"remaining": 800.0, "running": False}, clock_time=0.0)
    assert paused.big == "13:20" and paused.lines == ("PAUSED",)


def test_a_ruling_takes_the_screen_for_a_while():
    model = DisplayModel(alert_seconds=20)
    for event in _clock_events():
        model.update(event)
    model.update(_ruling("misdeal", "MISDEAL: 2nd card exposed - reshuffle, button stays", 50,
                         reason="exposed_first_two"))
    alert = model.screen(55.0)
    assert (alert.kind, alert.title, alert.inverted) == ("alert", "MISDEAL", True)
    assert alert.lines[0] == "2nd card exposed;"  # " - " reads "; "
    assert model.screen(71.0).kind == "clock"
    model.update(_ruling("misdeal", "MISDEAL: x", 80))
    model.update(_started(7, 85))  # the redeal clears it
    assert model.screen(86.0).kind == "clock"


def test_shot_clock_then_countdown_then_gone():
    model = DisplayModel()
    model.update(ShotClock(state="started", seconds=25, countdown=5, hand=7, t=100))
    assert (model.screen(101.0).kind, model.screen(101.0).big) == ("shot_clock", "29")
    countdown = model.screen(127.2)
    assert (countdown.title, countdown.big, countdown.inverted) == ("COUNTDOWN", "3", True)
    model.update(ShotClock(state="expired", hand=7, t=130))
    assert model.screen(131.0).title == "TIME"


def test_deck_check_break_hand_for_hand_and_game():
    model = DisplayModel()
    model.update(DeckCheckStarted(deck="R1", text="DECK CHECK R1", t=0))
    model.update(DeckCheckCard(deck="R1", card="As", card_deck="R1", count=12, t=1))
    assert model.screen(2.0).big == "12"
    model.update(DeckCheckResult(deck="R1", ok=True, count=52, missing=[], duplicates=[],
                                 foreign=[], unknown=[], jokers=0,
                                 text="DECK R1 OK: 52 cards", t=3))
    assert model.screen(4.0).big == "OK"
    assert model.screen(60.0).kind == "clock"
    model.update(BreakStarted(minutes=10, note=None, t=70))
    assert model.screen(71.0, {"remaining": 599, "running": True}, 70.0).big == "09:58"
    model.update(HandForHandChanged(state="waiting", t=80))
    assert model.screen(81.0).kind == "hand_for_hand"
    model.update(_started(8, 90))
    model.update(BreakEnded(t=91))
    model.update(GameDeclared(game="omaha8", betting="pot_limit", label="OMAHA HI/LO PL",
                              default=False, t=92))
    screen = model.screen(93.0)
    assert screen.lines == ("OMAHA HI/LO PL",)
    assert isinstance(screen, Screen)


@pytest.mark.parametrize("device", ["oled", "lcd"])
def test_a_long_ruling_is_paged_every_word_shown_each_page_long_enough_to_read(device):
    from controller.screens import ALERT_LINES, PAGE_SECONDS_PER_WORD

    text = ("PREMATURE TURN: card out of play; after betting burn and turn; reshuffle it in "
            "before the river, no burn")
    model = DisplayModel(alert_seconds=5, alert_lines=ALERT_LINES[device])
    model.update(_ruling("set_aside_turn", text, 100.0, street="turn"))
    shown: list[tuple[str, tuple[str, ...], float]] = []
    t = 100.0
    while (screen := model.screen(t)).kind == "alert":  # sampled every 0.1 s
        if not shown or (screen.title, screen.lines) != shown[-1][:2]:
            shown.append((screen.title, screen.lines, t))
        t = round(t + 0.1, 1)
    assert all(len(line) <= 20 for _, lines, _ in shown for line in lines)
    pages = list(dict.fromkeys((title, lines) for title, lines, _ in shown))
    words = " ".join(w for _, lines in pages for line in lines for w in line.split()
                     if "/" not in w)  # the page mark ("2/3") is not the ruling's
    assert words == text.split(": ", 1)[1]  # every word, in order, none cut
    if device == "lcd":
        assert [title for title, _ in pages] == [f"PREMATURE TURN {i}/3" for i in (1, 2, 3)]
        assert len(shown) == 6  # every page twice, though the alert time is only 5 s
    else:
        assert len(pages) == 1 and t - 100.0 >= 5
    for (_, lines, start), (_, _, end) in pairwise(shown):
        words_on_page = sum(len(line.split()) for line in lines)
        assert end - start >= max(3.0, PAGE_SECONDS_PER_WORD * words_on_page) - 0.11


def test_the_shoe_link_alert_goes_when_the_shoe_is_back_and_lost_reads_stay():
    model = DisplayModel()
    model.update(ShoeChanged(state="lost", hand=3, t=10.0))
    model.update(_ruling("call_floor", "SHOE LINK LOST: call the floor; hold the deal until "
                         "the shoe is back", 10.0, reason="shoe_fault", part="link"))
    assert model.screen(11.0).title.startswith("SHOE LINK LOST")
    model.update(ShoeChanged(state="ok", resumed=True, hand=3, t=12.0))
    screen = model.screen(12.5)
    assert screen.kind == "clock" and "SHOE ok" in screen.status
    model.update(ShoeReadsLost(lost=12, cards=12, hand=3, t=13.0))
    model.update(_ruling("call_floor", "12 CARD READS LOST: call the floor; check every seat "
                         "and the board", 13.0, reason="shoe_fault", part="reads", lost=12,
                         cards=12))
    model.update(ShoeChanged(state="ok", hand=3, t=14.0))
    assert model.screen(14.5).title.startswith("12 CARD READS LOST")  # the floor must check


def test_a_starting_table_says_hub_connecting_not_lost_until_the_grace_ends(tmp_path):
    import io

    from simulators.broker import free_port
    from tablectl.config import config_from_data
    from tablectl.daemon import HUB_CONNECT_GRACE, Daemon

    now = [1000.0]
    config = config_from_data({
        "table": {"venue": "v", "id": "t1"}, "shoe": {"backend": "none"},
        "button": {"backend": "none"}, "display": {"backend": "none"},
        "buzzer": {"backend": "none"}, "mqtt": {"port": free_port()},  # nobody listens
        "storage": {"data_dir": str(tmp_path)}}, "test")
    daemon = Daemon(config, out=io.StringIO(), clock=lambda: now[0]).start()
    try:
        daemon.tick()
        assert "HUB .." in daemon.screen.model.status.line()
        now[0] += HUB_CONNECT_GRACE
        daemon.tick()
        assert "HUB LOST" in daemon.screen.model.status.line()
    finally:
        daemon.stop()
