"""The statistics on the floor dashboard, in Debian's Chromium: a night whose figures are known
(tests/test_stats.py) stored in the hub's database, drawn by the vendored Chart.js, exported
as CSV; the vendored file is the one VENDORED.md names."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import time
from pathlib import Path

import pytest

from contract.wire import encode
from hub import auth
from hub.storage import open_storage
from simulators.broker import Broker
from tablectl.hub_app import Hub, HubSettings
from tests import test_stats
from tests.conftest import wait_for
from tests.floor_browser import SCREENSHOTS, chromium

STATIC = Path(__file__).resolve().parent.parent / "hub" / "static"


@pytest.mark.parametrize("library,licence", [("chart.umd.min.js", "chart.js.LICENSE.md")])
def test_each_vendored_library_is_the_file_its_note_names(library, licence):
    note = (STATIC / "VENDORED.md").read_text(encoding="utf-8")
    (named,) = re.findall(r"\| `" + re.escape(library) + r"` \|.*\| `([0-9a-f]{64})` \|", note)
    assert hashlib.sha256((STATIC / library).read_bytes()).hexdigest() == named
    assert (STATIC / licence).read_text(encoding="utf-8").startswith("The MIT License")


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    directory = tmp_path_factory.mktemp("stats")
    # The known night began two hours ago: inside the dashboard's default period.
    start = (int(time.time() * 1000) - 2 * 3600 * 1000) // 60_000 * 60_000
    events = test_stats.known_night(start)
    db = str(directory / "hub.db")
    storage = open_storage(db)
    for event in events:
        storage.insert(event["table"], event["seq"], event, encode(event), event["ts"])
    storage.commit()
    storage.close()
    broker = Broker(directory / "mosquitto").start()
    users = directory / "users.toml"
    auth.save_user(users, "val", "viewer", "val-password")
    hub = Hub(HubSettings(venue="stats", db=db, users=str(users), port=broker.port,
                          http_port=0)).start()
    try:
        with chromium() as browser:
            yield {"hub": hub, "browser": browser, "start": start}
    finally:
        hub.stop()
        broker.kill()


def _chart(page, canvas):
    """What a chart draws: its labels and each dataset's label and values."""
    return page.locator(f"#{canvas}").evaluate(
        "c => { const chart = window.Chart.getChart(c); return { labels: chart.data.labels, "
        "sets: chart.data.datasets.map(d => [d.label, d.data]) }; }")


def test_a_viewer_sees_the_nights_figures_as_charts_and_takes_them_as_csv(night, tmp_path):
    from playwright.sync_api import expect

    hub = night["hub"]
    context = night["browser"].new_context(viewport={"width": 1280, "height": 800},
                                           accept_downloads=True)
    page = context.new_page()
    page.goto(hub.url + "/login")
    page.fill("input[name=user]", "val")
    page.fill("input[name=password]", "val-password")
    page.click("button[type=submit]")
    page.locator("#stats-panel").scroll_into_view_if_needed()  # the charts load in view
    expect(page.locator("#stats-summary")).to_contain_text("6 hands from", timeout=15000)
    assert wait_for(lambda: page.evaluate("() => typeof window.Chart") == "function", 10)
    assert wait_for(lambda: page.locator("#chart-durations").evaluate(
        "c => !!window.Chart.getChart(c)"), 10), "the charts were not drawn"
    assert _chart(page, "chart-tables") == {
        "labels": ["t1", "t2"], "sets": [["hands per hour", [23.1, 6.0]]]}
    assert _chart(page, "chart-dealers") == {
        "labels": ["ann", "bob"], "sets": [["hands per hour", [22.5, 12.0]]]}
    assert _chart(page, "chart-irregular-tables") == {
        "labels": ["t1", "t2"], "sets": [["boxed card", [0, 1]], ["exposed card", [1, 0]],
                                         ["exposed two cards", [1, 0]]]}
    assert _chart(page, "chart-irregular-dealers")["sets"][0] == ["boxed card", [0, 1]]
    # Each kind its own colour, the same in both charts (one kind here is not the contract's).
    colours = {canvas: page.locator(f"#{canvas}").evaluate(
        "c => window.Chart.getChart(c).data.datasets.map(d => d.backgroundColor)")
        for canvas in ("chart-irregular-tables", "chart-irregular-dealers")}
    assert len(set(colours["chart-irregular-tables"])) == 3
    assert colours["chart-irregular-tables"] == colours["chart-irregular-dealers"]
    durations = _chart(page, "chart-durations")
    assert durations["labels"][4] == "120-180 s" and durations["sets"][0][1][4] == 5
    expect(page.locator("#stats-summary")).to_contain_text("a hand takes 120 s (median)")
    if SCREENSHOTS:
        target = Path(SCREENSHOTS)
        page.locator("#stats-panel").screenshot(path=str(target / "dashboard-stats.png"))
    # The CSV of the same period: one row a hand.
    with page.expect_download() as download:
        page.click("#stats-csv")
    text = Path(download.value.path()).read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:3] == ["table", "hand", "dealer"] and len(rows) == 7
    assert sorted(r[0] for r in rows[1:]) == ["t1"] * 5 + ["t2"]
    # A chosen period: the last half hour of the night holds t1's last two hands.
    page.select_option("#stats-period", "custom")
    local = "%Y-%m-%dT%H:%M"
    start = night["start"] / 1000
    page.fill("#stats-from", time.strftime(local, time.localtime(start + 30 * 60)))
    page.fill("#stats-to", time.strftime(local, time.localtime(start + 60 * 60)))
    page.click("#stats-load")
    expect(page.locator("#stats-summary")).to_contain_text("2 hands from")
    assert wait_for(lambda: _chart(page, "chart-tables")["labels"] == ["t1"], 10)
    context.close()


def test_chart_labels_show_bidirectional_controls_as_everything_else_does(night):
    """A dealer's name with a right-to-left override was drawn raw on the charts (every other
    text from the tables goes through the page's bidi filter)."""
    from playwright.sync_api import expect

    hub = night["hub"]
    storage = open_storage(hub.settings.db)
    start = night["start"] + 5 * 60_000
    for seq, (type_, ts) in enumerate((("hand.started", start),
                                       ("hand.ended", start + 60_000)), start=1):
        event = {"table": "t9", "seq": seq, "type": type_, "ts": ts, "hand": 1,
                 "dealer": "ev\u202elid", "data": {"outcome": "complete"}}
        storage.insert("t9", seq, event, encode(event), event["ts"])
    storage.commit()
    storage.close()
    context = night["browser"].new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(hub.url + "/login")
    page.fill("input[name=user]", "val")
    page.fill("input[name=password]", "val-password")
    page.click("button[type=submit]")
    page.locator("#stats-panel").scroll_into_view_if_needed()
    expect(page.locator("#stats-summary")).to_contain_text("7 hands from", timeout=15000)
    assert wait_for(lambda: page.locator("#chart-dealers").evaluate(
        "c => !!window.Chart.getChart(c)"), 10)
    assert "ev[U+202E]lid" in _chart(page, "chart-dealers")["labels"]
    context.close()


def test_every_irregularity_kind_has_a_colour_of_its_own():
    """The charts once cycled eight colours over thirteen kinds: two kinds looked alike."""
    from contract.schema import document

    source = (STATIC / "dashboard.js").read_text(encoding="utf-8")
    block = source.split("const KIND_COLOURS = {", 1)[1].split("};", 1)[0]
    colours = dict(re.findall(r'(\w+): "(#[0-9a-f]{6})"', block))
    kinds = document()["components"]["schemas"]["IrregularityData"]["properties"]["kind"]["enum"]
    assert sorted(colours) == sorted(kinds)
    assert len(set(colours.values())) == len(colours)
