"""A broadcast feed stream's reader (hub/reports.py: FeedReader) closed while a look at the
feed runs on another thread, as a stream ends under a client gone or a hub stopping: the close
waits for the look. Without it, SQLite's connection closed under a running query crashed the
process (a segmentation fault in make test, the test worker lost). Run in a process of its
own, so that a crash is an exit status here, not a lost test worker."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

RACE = textwrap.dedent("""
    import sys, threading, time
    from hub.reports import FeedReader
    from hub.storage import open_storage

    db = sys.argv[1]
    open_storage(db).close()  # the hub's schema
    for _ in range(40):
        reader = FeedReader(db, time.time)
        looking = threading.Event()

        def look():
            looking.set()
            try:
                while True:
                    reader.table("t1", hands=5)
            except RuntimeError as exc:  # closed: the look is refused, the loop ends
                assert "closed" in str(exc), exc

        thread = threading.Thread(target=look)
        thread.start()
        looking.wait()
        reader.close()
        thread.join(10)
        assert not thread.is_alive()
    print("ok")
""")


def test_a_feed_reader_closed_while_it_looks_waits_for_the_look(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", RACE, str(tmp_path / "hub.db")],
                            capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[1])
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr[-2000:]
