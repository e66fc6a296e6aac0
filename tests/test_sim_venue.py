"""The daemon end to end: `tablectl sim` tables (each `tablectl run` in its own process, the
simulated shoe on a pty, a mock GPIO button pressed by a scripted dealer) against a real broker
and the recorder; and the same under chaos."""

from __future__ import annotations

import json
import os
import signal
import time

from controller.inputs import parse_input
from controller.replay import replay
from controller.table import Table, TableConfig, TableUsageError
from hardware.sim_venue import SimulatedVenue


def _rulings(events):
    return [(e["hand"], e["action"]) for e in events if e["type"] == "ruling"]


def _records(events):
    return [(e["hand"], e["outcome"], e["hole"], e["board"], e["burns"])
            for e in events if e["type"] == "hand.ended"]


def _recorded(venue, table):
    return [{"type": e["type"], "hand": e["hand"], **e["data"]}
            for e in venue.recorder.envelopes(table.name)]


def test_three_simulated_tables_match_the_replay_of_their_scripts(tmp_path):
    venue = SimulatedVenue(tmp_path, tables=3, hands=70, pace=0.05, broker="required",
                           irregularities=0.5, seed=11, quiet=True).start()
    try:
        venue.run()
        assert venue.wait_delivered(90)
        for table in venue.tables:
            _, events = table.journal_and_events()
            expected = list(replay([json.dumps(x) for x in table.lines], venue.profile))
            assert _rulings(events) == _rulings(expected), table.name
            assert _records(events) == _records(expected), table.name
            assert venue.recorder.seqs(table.name) == list(range(1, table.last_seq + 1))
            recorded = _recorded(venue, table)
            assert [(e["type"], e["hand"]) for e in recorded] == [
                (e["type"], e.get("hand")) for e in events]
        assert venue.recorder.stats.invalid == 0
    finally:
        venue.stop()


def _replay_journal(venue, journal):
    """A fault-free run of the same inputs: the journal through a fresh core."""
    table = Table(venue.profile, TableConfig(deal_gap=3.0 * venue.pace))
    events = []
    for line in journal:
        if line["type"] == "tick":
            events += table.advance(float(line["t"]))
            continue
        try:
            events += table.handle(parse_input(line))
        except TableUsageError:
            continue
    return events


def test_chaos_broker_restart_sigkill_unplug_reload(tmp_path):
    venue = SimulatedVenue(tmp_path, tables=2, hands=10, pace=0.1, broker="required",
                           irregularities=0.3, seed=5, quiet=True).start()

    def chaos(venue, stop):
        first, second = venue.tables
        time.sleep(4)
        venue.broker.kill()  # the broker goes
        time.sleep(1.5)
        venue.broker.start()
        time.sleep(3)
        first.kill_daemon()  # SIGKILL mid-hand
        time.sleep(0.5)
        first.start_daemon()
        time.sleep(3)
        second.shoe.unplug()  # the shoe's cable pulled, and back
        time.sleep(1.0)
        second.shoe.replug()
        time.sleep(2)
        os.kill(second.process.pid, signal.SIGHUP)  # a configuration reload

    try:
        venue.run(chaos=chaos)
        assert venue.wait_delivered(90)
        for table in venue.tables:
            journal, events = table.journal_and_events()
            # Every event once, in order, at the recorder.
            assert venue.recorder.seqs(table.name) == list(range(1, table.last_seq + 1))
            recorded = [e["type"] for e in venue.recorder.envelopes(table.name)]
            assert recorded == [e["type"] for e in events]
            # The hands match a fault-free replay of the inputs the daemon received.
            again = _replay_journal(venue, journal)
            assert _rulings(again) == _rulings(events), table.name
            assert _records(again) == _records(events), table.name
        assert venue.tables[0].process.poll() is None  # restarted and running
        boots = {e["boot"] for e in venue.recorder.envelopes("t1")}
        assert len(boots) == 2
    finally:
        venue.stop()
