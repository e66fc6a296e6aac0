"""The simulated venue under chaos: the broker killed and restarted, a daemon SIGKILLed and
restarted, a shoe unplugged and replugged, a configuration reload; the recorder still holds
every event once, in order, and each table's hands equal a fault-free replay of its inputs.
(Apart from ``test_sim_venue.py`` so that make test's processes run the two long tests side by
side.)"""

from __future__ import annotations

import os
import signal
import time

import pytest

from harness.netns import unavailable
from tablectl.sim_venue import SimulatedVenue
from tests.test_sim_venue import _records, _rulings


@pytest.mark.slow
@pytest.mark.skipif(unavailable() is None,
                    reason="test_net_venue.py runs these faults, and the network's, on a venue "
                           "in network namespaces")
def test_chaos_broker_restart_sigkill_unplug_reload(tmp_path):
    venue = SimulatedVenue(tmp_path, tables=2, hands=10, pace=0.1, broker="required",
                           irregularities=0.3, seed=5, quiet=True).start()

    def chaos(venue, stop):
        first, second = venue.tables
        venue.off_script.update((first.name, second.name))  # killed, unplugged: not waited for
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
            assert venue.recorder.seqs(table.name) == list(range(1, table.last_seq() + 1))
            recorded = [e["type"] for e in venue.recorder.envelopes(table.name)]
            assert recorded == [e["type"] for e in events]
            # The hands match a fault-free replay of the inputs the daemon received.
            again = venue.replay_journal(journal)
            assert _rulings(again) == _rulings(events), table.name
            assert _records(again) == _records(events), table.name
        assert venue.tables[0].process.poll() is None  # restarted and running
        boots = {e["boot"] for e in venue.recorder.envelopes("t1")}
        assert len(boots) == 2
    finally:
        venue.stop()
