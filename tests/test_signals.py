"""SIGTERM, Ctrl-C and SIGHUP are noted, never raised nor locked on in the main thread
(tablectl.signals): a signal lands wherever the main thread stands."""

from __future__ import annotations

import os
import queue
import signal
import threading
import time

import pytest

from tablectl.signals import StopSignals
from tablectl.sim_venue import SimulatedVenue
from tests.conftest import wait_for


@pytest.fixture
def signal_handlers():
    """The process's handlers as they were, put back after the test (pytest's own SIGINT)."""
    kept = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}
    yield
    for signum, handler in kept.items():
        signal.signal(signum, handler)


def test_a_stop_signal_landing_anywhere_in_the_main_thread_raises_nothing(signal_handlers):
    """A storm of SIGTERM and SIGINT while the main thread starts threads and passes items
    through a queue and an event, the places where a raising handler once broke
    ``Thread.start()`` ("release unlocked lock") and a locking one would wait for ever."""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a person's terminal gives it
    stop = StopSignals().install()
    storm_over, halt = threading.Event(), threading.Event()
    sent = []

    def storm() -> None:
        for number in range(400):
            if halt.is_set():
                return
            os.kill(os.getpid(), signal.SIGTERM if number % 2 else signal.SIGINT)
            sent.append(number)
            time.sleep(0.0005)
        storm_over.set()

    items: queue.Queue[int] = queue.Queue()
    woken = threading.Event()
    started = 0
    storming = threading.Thread(target=storm, daemon=True)
    try:  # (a KeyboardInterrupt out of a test would end pytest's session, not fail the test)
        storming.start()
        while not storm_over.is_set():
            worker = threading.Thread(target=lambda: (items.put(1), woken.set()))
            worker.start()
            started += 1
            items.get(timeout=5)
            woken.wait(5)
            woken.clear()
            worker.join(5)
        time.sleep(0.1)  # (a handler still pending runs in here)
    except BaseException as raised:  # what the handler let out is the failure
        for signum in (signal.SIGTERM, signal.SIGINT):  # the rest of the storm: ignored
            signal.signal(signum, signal.SIG_IGN)
        halt.set()
        storming.join(5)
        pytest.fail(f"a signal raised {raised!r} in the main thread after {len(sent)} sent")
    assert len(sent) == 400 and started > 0
    assert stop.by == "Ctrl-C"  # the first signal sent; the later ones change nothing
    assert stop.wait(0) and stop.is_set()


def test_a_stop_signal_ends_a_wait_and_none_lets_it_time_out(signal_handlers):
    stop = StopSignals().install()
    assert not stop.wait(0.01) and stop.by is None
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM)).start()
    assert stop.wait(30)
    assert stop.by == "SIGTERM"


def test_an_ignored_ctrl_c_stays_ignored(signal_handlers):
    """A process started with SIGINT ignored (nohup, a background job) keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    StopSignals().install()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_a_table_daemon_reloads_on_sighup_and_stops_on_sigterm(tmp_path):
    """The daemon's handlers only note the signal; its loop, turning every tick, acts."""
    venue = SimulatedVenue(tmp_path, tables=1, hands=1, broker="none", quiet=True).start()
    try:
        table = venue.tables[0]
        assert table.process is not None
        table.process.send_signal(signal.SIGHUP)

        def reloaded() -> bool:
            return any("reloaded: nothing changed" in line for line in table.output)

        # (Waited for until reloaded or gone: -1 is SIGHUP's default, the handler not yet in.)
        wait_for(lambda: reloaded() or table.process.poll() is not None, 30)
        assert reloaded(), f"exit {table.process.poll()}; " + "\n".join(table.output)
        table.process.send_signal(signal.SIGTERM)
        assert table.process.wait(30) == 0, "\n".join(table.output)
    finally:
        venue.stop()
