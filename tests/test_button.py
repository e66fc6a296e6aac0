"""The dealer button: gestures recognised from a gpiozero mock pin driven as a finger would,
bounces included."""

from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory

from controller.gestures import GestureConfig, GestureRecogniser
from hardware.button import DealerButton


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Finger:
    """Presses a button wired to a mock pin (active low), with contact bounce."""

    def __init__(self, config=None):
        self.factory = MockFactory()
        self.clock = FakeClock()
        self.events = []
        self.button = DealerButton(17, self.events.append, config=config,
                                   pin_factory=self.factory, clock=self.clock,
                                   timer=False)
        self.pin = self.factory.pin(17)

    def wait(self, seconds: float, step: float = 0.01) -> None:
        end = self.clock.now + seconds
        while self.clock.now < end:
            self.clock.now = min(end, self.clock.now + step)
            self.button.tick()

    def _bounce(self, final_low: bool, bounces: int) -> None:
        for i in range(bounces * 2 + 1):
            low = (i % 2 == 0) == final_low
            if low:
                self.pin.drive_low()
            else:
                self.pin.drive_high()
            self.clock.now += 0.002  # contact chatter, 2 ms apart
        self.button.tick()

    def press(self, seconds: float, bounces: int = 3) -> None:
        self._bounce(True, bounces)
        self.wait(seconds)
        self._bounce(False, bounces)
        self.wait(0.05)

    def gestures(self):
        return [e.kind for e in self.events if e.kind != "held"]

    def close(self):
        self.button.close()
        self.factory.close()


@pytest.fixture
def finger():
    f = Finger()
    yield f
    f.close()


def test_a_bouncy_tap_is_one_tap(finger):
    finger.press(0.15, bounces=4)
    finger.wait(1.0)
    assert finger.gestures() == ["tap"]
    assert finger.events[0].duration == pytest.approx(0.15, abs=0.03)


def test_double_tap_after_the_tap(finger):
    finger.press(0.1)
    finger.wait(0.2)
    finger.press(0.1)
    finger.wait(1.0)
    assert finger.gestures() == ["tap", "double_tap"]


def test_two_taps_far_apart_are_two_taps(finger):
    finger.press(0.1)
    finger.wait(1.0)
    finger.press(0.1)
    assert finger.gestures() == ["tap", "tap"]


def test_hold_and_long_hold_with_feedback_while_held(finger):
    finger.press(2.0)
    assert finger.gestures() == ["hold"]
    assert [e.detail for e in finger.events if e.kind == "held"] == ["hold"]
    finger.events.clear()
    finger.press(4.5)
    assert finger.gestures() == ["long_hold"]
    assert [e.detail for e in finger.events if e.kind == "held"] == ["hold", "long_hold"]


def test_released_just_before_the_hold_threshold_is_a_tap(finger):
    finger.press(1.45)
    assert finger.gestures() == ["tap"]


def test_released_just_before_the_long_hold_threshold_is_a_hold(finger):
    finger.press(3.9)
    assert finger.gestures() == ["hold"]


def test_bounce_alone_is_nothing(finger):
    # A knock on the table: the contact chatters for a few ms and settles open.
    finger.pin.drive_low()
    finger.clock.now += 0.004
    finger.pin.drive_high()
    finger.wait(1.0)
    assert finger.events == []


def test_thresholds_are_configurable():
    f = Finger(GestureConfig(hold=0.8, long_hold=2.0, double_tap=0.2))
    try:
        f.press(1.0)
        f.press(2.5)
        f.press(0.1)
        f.wait(0.3)  # longer than the double-tap window
        f.press(0.1)
        assert f.gestures() == ["hold", "long_hold", "tap", "tap"]
    finally:
        f.close()


def test_bad_config_is_reported_with_its_keys():
    problems = GestureConfig(hold=5.0, long_hold=4.0).problems()
    assert problems == ["button.long_hold: 4.0 s must be longer than button.hold (5.0 s)"]
    assert GestureConfig(debounce=0).problems()[0].startswith("button.debounce")
    with pytest.raises(ValueError):
        GestureRecogniser(GestureConfig(double_tap=-1))


def test_stamped_edges_delivered_late_keep_their_rhythm():
    """The simulator's finger stamps each edge: two taps a second apart that a busy machine
    delivers in one burst are two taps, not a tap and a double tap."""
    finger = Finger()
    try:
        button, clock = finger.button, finger.clock
        clock.now = 200.0  # everything arrives now, in a burst
        for at, low in ((198.0, True), (198.1, False), (199.0, True), (199.1, False)):
            button.edge_time = at
            if low:
                finger.pin.drive_low()
            else:
                finger.pin.drive_high()
            button.tick()
        finger.wait(0.5)
        assert finger.gestures() == ["tap", "tap"]
        assert [round(e.t, 3) for e in finger.events if e.kind == "tap"] == [198.1, 199.1]
        # Unstamped, the same burst reads as the dealer's double tap.
        later = Finger()
        try:
            for low in (True, False, True, False):
                if low:
                    later.pin.drive_low()
                else:
                    later.pin.drive_high()
                later.clock.now += 0.05
                later.button.tick()
            later.wait(0.5)
            assert later.gestures() == ["tap", "double_tap"]
        finally:
            later.close()
    finally:
        finger.close()


def test_the_simulators_control_socket_believes_only_stamps_of_this_run(tmp_path):
    """A stamp that is no moment of this run (NaN, far future) is ignored: the edge keeps the
    time it arrived, so one bad datagram cannot freeze or warp the dealer's button."""
    import io
    import socket
    import time

    from tablectl.config import config_from_data
    from tablectl.daemon import Daemon
    from tablectl.parts import ButtonPressed
    from tests.conftest import wait_for

    control = tmp_path / "button.sock"
    config = config_from_data({
        "table": {"venue": "v", "id": "t1"}, "shoe": {"backend": "none"},
        "button": {"backend": "mock", "pin": 17, "control": str(control)},
        "display": {"backend": "none"}, "buzzer": {"backend": "none"},
        "mqtt": {"enabled": False}, "storage": {"data_dir": str(tmp_path)}}, "test")
    daemon = Daemon(config, out=io.StringIO()).start()
    finger = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    def gestures():
        got = []
        while not daemon.queue.empty():
            item = daemon.queue.get()
            if isinstance(item, ButtonPressed) and item.gesture.kind != "held":
                got.append(item.gesture)
        return got

    try:
        last_tap = [0.0]

        def arrived() -> list:  # the gestures of the next press to arrive (with a deadline)
            seen: list = []
            assert wait_for(lambda: seen.extend(gestures()) or seen, 5)
            return seen

        def release_later() -> bytes:  # a good stamp: the finger lifts 0.1 s from now
            return b"up %.6f" % (time.monotonic() + 0.1)

        # A press the simulator's dealer stamps at its moment in the script after waiting up
        # to 15 s for the shoe (a starved machine): a tap, its rhythm kept. (Refused, its
        # down and up came together: a bounce, the press lost.)
        pressed = time.monotonic() - 14.0
        finger.sendto(b"down %.6f" % pressed, str(control))
        finger.sendto(b"up %.6f" % (pressed + 0.1), str(control))
        seen = arrived()
        assert [g.kind for g in seen] == ["tap"]
        assert seen[0].t == pytest.approx(daemon.now() - 14.0 + 0.1, abs=2.0)
        last_tap[0] = seen[0].t
        for stamp in (b"nan", b"1e300"):
            # A dealer's taps half a second apart are two taps, not a double tap.
            assert wait_for(lambda: daemon.now() > last_tap[0] + 0.5, 5)
            # Believed, this press would begin at NaN or in the year 3e292: no tap at all.
            finger.sendto(b"down " + stamp, str(control))
            # The press keeps the moment it is taken, however late on a busy machine: the
            # release is stamped from then, or it could come before the press.
            assert wait_for(lambda: not daemon.parts.button.pin.state, 5)
            finger.sendto(release_later(), str(control))
            seen = arrived()
            assert [g.kind for g in seen] == ["tap"], stamp
            last_tap[0] = seen[0].t
        # Not a number at all: refused. The barrier: a good tap after it is the only one.
        assert wait_for(lambda: daemon.now() > last_tap[0] + 0.5, 5)
        finger.sendto(b"down oops", str(control))
        finger.sendto(b"up oops", str(control))
        finger.sendto(b"down %.6f" % time.monotonic(), str(control))
        finger.sendto(release_later(), str(control))
        assert [g.kind for g in arrived()] == ["tap"]
    finally:
        finger.close()
        daemon.stop()


def test_the_recogniser_says_when_it_next_needs_time():
    """The timer sleeps until ``next_deadline``: none while nothing is pending, the end of the
    debounce after an edge, then each hold threshold while the button is down."""
    config = GestureConfig(debounce=0.03, hold=1.5, long_hold=4.0)
    recogniser = GestureRecogniser(config)
    assert recogniser.next_deadline() is None  # idle: no wake-up until an edge
    recogniser.edge(10.0, True)
    assert recogniser.next_deadline() == pytest.approx(10.03)
    assert recogniser.tick(10.02) == [] and recogniser.next_deadline() == pytest.approx(10.03)
    recogniser.tick(10.03)
    assert recogniser.next_deadline() == pytest.approx(11.5)  # the hold threshold
    assert [e.detail for e in recogniser.tick(11.5)] == ["hold"]
    assert recogniser.next_deadline() == pytest.approx(14.0)  # the long hold threshold
    assert [e.detail for e in recogniser.tick(14.0)] == ["long_hold"]
    assert recogniser.next_deadline() is None  # down, every threshold announced
    recogniser.edge(15.0, False)
    assert recogniser.next_deadline() == pytest.approx(15.03)
    assert [e.kind for e in recogniser.tick(15.03)] == ["long_hold"]
    assert recogniser.next_deadline() is None


def test_the_timer_reports_a_tap_and_a_hold_with_nobody_ticking():
    """On the real clock, the timer thread alone settles the release (the tap is reported once
    the debounce has passed) and announces a hold while the button is still down."""
    from tests.conftest import wait_for

    factory = MockFactory()
    events: list = []
    button = DealerButton(17, events.append, config=GestureConfig(hold=0.3, long_hold=0.6),
                          pin_factory=factory)
    pin = factory.pin(17)
    try:
        pin.drive_low()
        pin.drive_high()  # a 0-length press: a bounce, filtered
        pin.drive_low()
        assert wait_for(lambda: [e.detail for e in events] == ["hold"], 5)
        pin.drive_high()
        assert wait_for(lambda: [e.kind for e in events] == ["held", "hold"], 5)
        assert button.recogniser.next_deadline() is None  # and so the timer sleeps
        pin.drive_low()
        pin.drive_high()
        pin.drive_low()
        time_pressed = button.clock()
        assert wait_for(lambda: button.recogniser.pressed, 5)
        pin.drive_high()
        assert wait_for(lambda: [e.kind for e in events][-1:] == ["tap"], 5)
        assert events[-1].t >= time_pressed
    finally:
        button.close()
        factory.close()
