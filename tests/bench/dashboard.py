"""The floor dashboard on a tablet: what a room of dealing tables costs the page's main thread.

    python -m tests.bench.dashboard [--rooms 20,200] [--seconds 60] [--cpu 4] [--json]
                                    [--profile] [--trace SECONDS] [--trace-taps]

For each room size, in one run: a Mosquitto, the hub, and the room's tables as publishers in
processes of their own (the events of generated hands, through the core, as a table link sends
them: each on ``private`` and its public view on ``events``, a ``state`` snapshot after each
hand, the tables online). Debian's Chromium, driven by Playwright, shows the dashboard to a
floor member on a tablet's screen (1280x800) with the CPU slowed down by the DevTools protocol
(``Emulation.setCPUThrottlingRate``) standing in for a mid-range tablet (4x) or an older one
(6x). Measured with the protocol's own counters (``Performance.getMetrics``):

- the first draw: from the page's reload to every table's card on screen;
- the page idle (the room still, only its clocks counting) over ``--idle-seconds``: the main
  thread's busy time (``TaskDuration``) per second of wall time: the baseline;
- the room dealing, every table one event a second, over ``--seconds``: busy time per second,
  the events the page received, the busy time one event costs above the idle page
  (``(busy - idle busy) / events``);
- then, the room still dealing, ``--taps`` of each of two taps a floor member makes, each from
  the press to the frame that shows it: a table opened (its dialog) and an alert acknowledged
  (its button taken), p50 and p99: to the start of the frame that shows it (its animation
  frame callbacks), and to that frame's style, layout and paint done (the task after it).
  Each on a card or alert on screen: scrolled to, two frames drawn, then 0.3 s, as a person
  looks before the finger lands;
- the heap and the DOM's node count, after a forced collection, at the start and the end of
  the dealing, and their highest in between, while a floor member on another tablet
  acknowledges the alerting tables' alerts every ``--acknowledge-every`` seconds (the room's
  steady state, not a pile of alerts nobody answers);
- the TV page (1920x1080) beside it, its busy time per second.

Targets (issue 50): with 200 tables dealing at 4x, the main thread busy under 20 % of each
second; a tap shown within 100 ms at p99; the first draw under 1.5 s; the heap and nodes flat;
one event's cost the same in a room of 20 as in one of 200 (the ratio printed). ``--profile``
adds the page's functions by self time while the biggest room deals (the DevTools profiler).
``--trace SECONDS`` adds, after the taps, a trace of the biggest room's page dealing
(Chromium's tracing, the DevTools timeline's events): its main thread's tasks (p50, p99, the
longest: a finger waits for the task under way when it lands), the share of the time in
tasks of 50 ms or more, what such a task spends on style, layout, paint and script, the
layouts and the objects they lay out, and the five longest tasks, each with its script's
entry points, and what the frames repaint (the ``paint`` figures: the layers painted anew
and their area, the tiles rastered, whatever the machine's load: a card's change repaints
that card, the second's tick the few pixels that count); ``--trace-file PATH`` keeps the
trace for DevTools' performance panel. The trace is of the first screen (scrolled to the top
after the taps). ``--trace-taps`` traces the biggest room's taps and prints the five slowest,
each as the main thread's tasks from the press to the frame that showed it (when each began
after the press, its length, its style, layout, paint and script, its entry points).
It asserts nothing: tests assert behaviour, never speed.
"""

from __future__ import annotations

import argparse
import bisect
import json
import multiprocessing
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from contract.envelope import envelope
from contract.schema import receive
from contract.views import public_event
from simulators.broker import Broker
from simulators.staff import Staff
from tablectl.bench import percentile

VENUE = "bench"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TABLET = {"width": 1280, "height": 800}
TV = {"width": 1920, "height": 1080}
SEATS = list(range(1, 10))

# In the page before its own script: counts what the event stream delivers, and times a tap
# from its press (the event's own time stamp) to the frame after the page has shown it: to
# that frame's start (its animation frame callbacks), and to the task after it, once the
# frame's style, layout and paint are done (what the finger waits for; "-frame").
PAGE_PROBE = """
(() => {
  window.__bench = { updates: 0, taps: [] };
  const Original = window.EventSource;
  window.EventSource = function (url, options) {
    const source = new Original(url, options);
    source.addEventListener("update", () => { window.__bench.updates += 1; });
    return source;
  };
  // ``target``: a selector the press must land in, or the tap is counted as missed. A tap
  // ends the one before it: a tap that never came (its click failed) or missed looked for its
  // frame at every frame for 30 s, keeping the page drawing 60 frames a second, and its
  // listener took the next tap's press.
  let ended = null;
  window.__benchTap = (kind, target, shown) => {
    if (ended) ended();
    let pressed = null;
    let over = false;
    const press = (event) => {
      if (event.target.closest(target)) pressed = event.timeStamp;
      else { window.__bench.taps.push([kind + "-missed", 0]); over = true; }
    };
    document.addEventListener("pointerdown", press, { capture: true, once: true });
    ended = () => {
      over = true;
      document.removeEventListener("pointerdown", press, { capture: true });
    };
    const until = performance.now() + 30000;  // a tap that never came stops looking
    const look = () => {
      if (over) return;
      if (pressed !== null && shown()) {
        const at = pressed;
        window.__bench.taps.push([kind, performance.now() - at]);
        // The frame that showed it, marked in a trace (--trace-taps): bench-tap-INDEX.
        console.timeStamp(`bench-tap-${window.__bench.taps.length - 1}`);
        const after = new MessageChannel();
        after.port1.onmessage = () =>
          window.__bench.taps.push([kind + "-frame", performance.now() - at]);
        after.port2.postMessage(null);
      } else if (performance.now() < until) requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  };
  window.__benchEnd = () => { if (ended) ended(); };
})();
"""


def _events(hands: int) -> list[dict[str, Any]]:
    """The events of generated hands (mixed games, some irregularities) through the core."""
    from houses.loaders import load_profile
    from simulators.dealer_script import session
    from tablectl.bench import replay_lines

    lines, _ = session(random.Random(11), load_profile("tda-2024"), hands=hands,
                       irregularity_rate=0.1)
    return list(replay_lines(lines))


def _state(table: str, hand: int | None, seq: int, now_ms: int) -> dict[str, Any]:
    """A table's ``state`` snapshot between hands: nine players, a dealer, the clock."""
    button = hand % 9 + 1 if hand else 1
    return {"hand": hand, "in_progress": False, "street": None, "phase": "idle",
            "dealer": f"D{int(table[1:]) % 40 + 1}", "shoe": "ok",
            "clock": {"structure": "tda-2024", "level": 3, "on_break": False, "running": True,
                      "remaining": 900},
            "profile": "tda-2024", "hand_for_hand": "off", "seats": SEATS,
            "button": button,
            "blind_seats": {"small": button % 9 + 1, "big": (button + 1) % 9 + 1},
            "dealer_stats": {"type": "dealer.summary", "dealer": f"D{int(table[1:]) % 40 + 1}",
                             "hands": hand or 0, "minutes": 20, "hands_per_hour": 31,
                             "t": now_ms / 1000},
            "links": {"hub": "ok"}, "last_seq": seq, "ts": now_ms}


def _messages(table: str, seq: int, event: dict[str, Any]) -> list[tuple[str, bytes, bool]]:
    now = int(time.time() * 1000)
    root = f"pkr/v1/{VENUE}/tables/{table}/"
    private = envelope(event, venue=VENUE, table=table, seq=seq, boot=1, ts_ms=now)
    out = [(root + "private", json.dumps(private).encode(), False)]
    public = public_event(event)
    if public is not None:
        shown = envelope(public, venue=VENUE, table=table, seq=seq, boot=1, ts_ms=now)
        out.append((root + "events", json.dumps(shown).encode(), False))
    if event.get("type") == "hand.ended":
        out.append((root + "state", json.dumps(_state(table, event.get("hand"), seq, now))
                    .encode(), True))
    return out


def _publisher(port: int, tables: list[str], events: list[dict[str, Any]], ready: Any,
               go: Any, stop: Any) -> None:
    """Some of the room's tables: online with a state, then one event a second each (the
    tables spread over the second) until told to stop."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"room-{tables[0]}",
                         protocol=mqtt.MQTTv5)
    client.max_inflight_messages_set(64)
    client.connect("127.0.0.1", port, keepalive=60)
    client.loop_start()
    now = int(time.time() * 1000)
    for table in tables:
        root = f"pkr/v1/{VENUE}/tables/{table}/"
        client.publish(root + "status", json.dumps(
            {"state": "online", "boot": 1, "table": table, "ts": now}), qos=1, retain=True)
        client.publish(root + "state", json.dumps(_state(table, None, 0, now)), qos=1,
                       retain=True).wait_for_publish(30)
    ready.set()
    go.wait()
    start = time.monotonic()
    tick = 0
    while not stop.is_set():
        for index, table in enumerate(tables):
            due = start + tick + index / len(tables)
            while (delay := due - time.monotonic()) > 0 and not stop.is_set():
                time.sleep(min(delay, 0.05))
            # Each table at its own place in the hands, so that they do not deal in step.
            offset = int(table[1:]) * 7
            event = events[(tick + offset) % len(events)]
            for topic, payload, retain in _messages(table, tick + 1, event):
                client.publish(topic, payload, qos=1, retain=retain)
        tick += 1
    client.disconnect()  # first: the network thread then ends at once
    client.loop_stop()


class Room:
    """The room's tables in two processes: ``start`` puts them online, ``deal`` makes them
    deal, ``close`` stops them."""

    def __init__(self, port: int, count: int, events: list[dict[str, Any]]) -> None:
        context = multiprocessing.get_context("spawn")
        names = [f"t{i}" for i in range(1, count + 1)]
        self.go, self.stop = context.Event(), context.Event()
        self.ready = []
        self.processes = []
        for part in range(min(2, count)):
            ready = context.Event()
            self.ready.append(ready)
            self.processes.append(context.Process(target=_publisher, args=(
                port, names[part::2], events, ready, self.go, self.stop), daemon=True))

    def start(self) -> Room:
        for process in self.processes:
            process.start()
        for ready in self.ready:
            if not ready.wait(120):
                raise RuntimeError("the room's tables did not connect")
        return self

    def deal(self) -> None:
        self.go.set()

    def close(self) -> None:
        self.stop.set()
        self.go.set()
        for process in self.processes:
            process.join(10)
            if process.is_alive():
                process.kill()


class FloorMember(threading.Thread):
    """A floor member on another tablet who goes to the tables that alert and acknowledges
    their alerts, every ``every`` seconds: the room's steady state (its alerts open a while,
    then acknowledged), not a pile of alerts nobody answers."""

    def __init__(self, url: str, every: float) -> None:
        super().__init__(daemon=True)
        self.staff = Staff(url, "floor2", "floor2-password")
        self.every = every
        self.stop = threading.Event()
        self.acknowledged = 0
        self.failed_rounds = 0

    def run(self) -> None:
        # A round that fails (the hub slow to answer on a busy machine, an answer that is not
        # JSON) is counted and the next one tried: one such ended the thread, and a 720 s run
        # went on with nobody acknowledging, its open alerts piling up.
        while not self.stop.wait(self.every):
            try:
                self.round()
            except (OSError, ValueError):
                self.failed_rounds += 1

    def round(self) -> None:
        status, room = self.staff.get("/api/state")
        if status != 200:
            self.failed_rounds += 1
            return
        open_by_table: dict[str, list[int]] = {}
        for alert in room["alerts"]:
            if not alert.get("acked_by"):
                open_by_table.setdefault(alert["table"], []).append(alert["id"])
        for table, ids in open_by_table.items():
            status, answer = self.staff.post(f"/api/tables/{table}/alerts/ack", {"alerts": ids})
            if status == 200:
                self.acknowledged += len(answer["acknowledged"])


class Counters:
    """The DevTools protocol's counters for one page."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.session = page.context.new_cdp_session(page)
        self.session.send("Performance.enable")

    def read(self) -> dict[str, float]:
        metrics = self.session.send("Performance.getMetrics")["metrics"]
        return {m["name"]: m["value"] for m in metrics}

    def throttle(self, rate: float) -> None:
        self.session.send("Emulation.setCPUThrottlingRate", {"rate": rate})

    def collected(self) -> dict[str, float]:
        """Heap and nodes once garbage is collected (what stays, not what waits)."""
        self.session.send("HeapProfiler.enable")
        self.session.send("HeapProfiler.collectGarbage")
        figures = self.read()
        # Which nodes: those in the page (its elements; the floor log's lines and the
        # acknowledged alerts, each list capped at 100; the open alerts), and the rest, held by
        # the page's script only.
        shown = self.page.evaluate(
            "() => ({elements: document.getElementsByTagName('*').length,"
            " log_lines: document.querySelectorAll('#log li').length,"
            " alert_items: document.querySelectorAll('#alerts li').length,"
            " acknowledged_items: document.querySelectorAll('#acked li').length})")
        return {"heap_mb": round(figures["JSHeapUsedSize"] / 1e6, 2),
                "nodes": int(figures["Nodes"]), **shown}


def busy_over(counters: Counters, seconds: float, during: Any = None) -> dict[str, float]:
    """The main thread's busy time per second of wall time over ``seconds``; ``during`` is
    called now and then meanwhile (taps, samples)."""
    before, start = counters.read(), time.monotonic()
    while (left := start + seconds - time.monotonic()) > 0:
        if during is not None:
            during()
        time.sleep(min(left, 0.5))
    after, wall = counters.read(), time.monotonic() - start
    def per_second(counter: str) -> float:
        return round((after[counter] - before[counter]) / wall * 1000, 1)

    return {"wall_s": round(wall, 2), "busy_ms_per_s": per_second("TaskDuration"),
            "script_ms_per_s": per_second("ScriptDuration"),
            "layout_ms_per_s": per_second("LayoutDuration"),
            "style_ms_per_s": per_second("RecalcStyleDuration")}


def login(browser: Any, url: str, viewport: dict[str, int]) -> Any:
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.add_init_script(PAGE_PROBE)
    page.goto(url + "/login")
    page.fill("input[name=user]", "bench")
    page.fill("input[name=password]", "bench-password")
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-live='1']", timeout=60_000)
    return page


# A floor member scrolls to a card, sees it, then taps it: the tap comes after the frames that
# drew the scroll, not within one (Playwright's click scrolls and presses at once, and a press
# timed from inside the scroll's frame, 40 ms of paint at 4x, was a scroll's cost and a tap's).
LOOK_SECONDS = 0.3


def look_at(page: Any, selector: str) -> None:
    """Scroll ``selector`` into view, wait for two frames drawn after it, and look a moment."""
    page.locator(selector).scroll_into_view_if_needed(timeout=30_000)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    time.sleep(LOOK_SECONDS)


def tap_table(page: Any, names: list[str], rng: random.Random) -> None:
    """Open a table as a floor member does, and close it again."""
    name = rng.choice(names)
    look_at(page, f"#tables .table[data-table='{name}'] .name")
    page.evaluate("(name) => window.__benchTap('open', `.table[data-table='${name}']`, "
                  "() => document.querySelector('#table-dialog').open)", name)
    page.click(f"#tables .table[data-table='{name}'] .name", timeout=30_000)
    page.wait_for_function("() => document.querySelector('#table-dialog').open",
                           timeout=30_000)
    page.click("#table-dialog .close", timeout=30_000)
    page.wait_for_function("() => !document.querySelector('#table-dialog').open",
                           timeout=30_000)


def tap_alert(page: Any) -> bool:
    """Acknowledge the first open alert, if there is one: shown when its button is taken (or
    the alert has left the open list)."""
    button = page.locator("#alerts .alert .ack").first
    if not button.count():
        return False
    alert = button.evaluate("(b) => b.closest('.alert').dataset.alert")
    try:
        look_at(page, f"#alerts .alert[data-alert='{alert}'] .ack")
    except Exception:  # acknowledged meanwhile elsewhere
        return False
    page.evaluate("(id) => window.__benchTap('ack', `.alert[data-alert='${id}'] .ack`, () => {"
                  " const a = document.querySelector(`#alerts .alert[data-alert='${id}']`);"
                  " return !a || a.querySelector('.ack').disabled; })", alert)
    try:
        page.locator(f"#alerts .alert[data-alert='{alert}'] .ack").click(timeout=5_000)
    except Exception:  # acknowledged meanwhile elsewhere: a tap that found nothing
        return False
    return True


def profile_top(counters: Counters, seconds: float, top: int = 12) -> dict[str, Any]:
    """The page's functions over ``seconds`` (the DevTools profiler): by self time, and the
    dashboard's own by total time (what they and what they call took)."""
    session = counters.session
    session.send("Profiler.enable")
    session.send("Profiler.setSamplingInterval", {"interval": 500})
    session.send("Profiler.start")
    time.sleep(seconds)
    profile = session.send("Profiler.stop")["profile"]
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}

    def name(node: dict[str, Any]) -> str:
        frame = node["callFrame"]
        where = frame["url"].rsplit("/", 1)[-1]
        function = frame["functionName"] or "(anonymous)"
        return f"{function} {where}:{frame['lineNumber'] + 1}" if where else function

    self_us: Counter[str] = Counter()
    total_us: Counter[str] = Counter()
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"], strict=False):
        self_us[name(nodes[node_id])] += delta
        seen = set()
        walk: int | None = node_id
        while walk is not None:
            label = name(nodes[walk])
            if "dashboard.js" in label and label not in seen:
                seen.add(label)
                total_us[label] += delta
            walk = parent.get(walk)
    every = sum(self_us.values()) or 1

    def rows(counts: Counter[str]) -> list[dict[str, Any]]:
        return [{"function": label, "ms": round(us / 1000, 1), "share": round(us / every, 3)}
                for label, us in counts.most_common(top) if label != "(idle)"]

    return {"seconds": seconds, "self": rows(self_us), "dashboard_total": rows(total_us)}


# What a main-thread task spends its time on, by the DevTools timeline's event names: the
# frame's rendering (style, layout, paint and what follows it) and the page's script.
TRACE_PARTS = {
    "style": ("UpdateLayoutTree", "RecalculateStyles"),
    "layout": ("Layout",),
    "paint": ("PrePaint", "Paint", "Layerize", "UpdateLayer", "Commit", "PaintImage"),
    "script": ("FunctionCall", "TimerFire", "EventDispatch", "FireAnimationFrame",
               "EvaluateScript", "v8.compile", "XHRReadyStateChange", "ParseHTML"),
}


def painted(events: list[dict[str, Any]], pid: Any, mine: list[dict[str, Any]],
            tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """What the page repaints a frame, from the trace, whatever the machine's load: the
    layers painted anew and their area, and the tiles rastered. A frame's paint is one
    ``Paint`` event over the whole view (its cull rect: the viewport and 4000 px around it,
    walked whatever changed, the layers that did not change taken from the cache) with one
    ``Paint`` event inside it for each paint layer painted anew, its ``clip`` that layer's
    rect: what changed, redrawn. ``RasterTask``: a tile of a composited layer rastered again
    (in the compositor's tile workers), by the frame it was painted in."""
    starts = [t["ts"] for t in tasks]
    frames: dict[int, list[tuple[str, float]]] = {}
    for e in sorted((e for e in mine if e["name"] == "Paint"),
                    key=lambda e: (e["ts"], -e.get("dur", 0))):
        index = bisect.bisect_right(starts, e["ts"]) - 1
        if index < 0:
            continue
        data = e.get("args", {}).get("data", {})
        quad = data.get("clip") or [0] * 8
        area = abs(quad[2] - quad[0]) * abs(quad[5] - quad[1])
        frames.setdefault(index, []).append((str(data.get("nodeName", "?")), area))
    # Each frame's first Paint is the frame's walk of the view (the outermost); the rest are
    # the layers painted anew.
    layers = [paints[1:] for paints in frames.values()]
    by_layer: Counter[str] = Counter()  # the area painted over the trace, by element
    for frame in layers:
        for name, area in frame:
            by_layer[name[:60]] += area
    tiles = Counter(e["args"]["tileData"].get("sourceFrameNumber") for e in events
                    if e.get("name") == "RasterTask" and e.get("pid") == pid
                    and "tileData" in e.get("args", {}))
    areas = [sum(area for _, area in frame) for frame in layers]
    return {
        "frames": len(layers),
        "view_px": int(percentile([frame_paints[0][1] for frame_paints in frames.values()], 50))
        if frames else None,
        "layers_repainted_p50": percentile([len(frame) for frame in layers], 50)
        if layers else None,
        "repainted_px_p50": int(percentile(areas, 50)) if areas else None,
        "repainted_px_p90": int(percentile(areas, 90)) if areas else None,
        "repainted_px_total": int(sum(areas)),
        "by_layer_px": dict(by_layer.most_common(4)),
        "raster_frames": len(tiles),
        "tiles_rastered_p50": percentile(list(tiles.values()), 50) if tiles else None,
        "tiles_rastered_total": sum(tiles.values())}


def start_trace(browser: Any) -> None:
    browser.start_tracing(categories=[  # no page: its screenshots would be painted
        "devtools.timeline", "disabled-by-default-devtools.timeline", "toplevel"])


def stop_trace(browser: Any, keep: str | None = None) -> tuple[
        list[dict[str, Any]], Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """The trace's events, the dashboard's renderer, its main thread's complete events and
    its tasks (the outermost), in order."""
    raw = browser.stop_tracing()
    if keep:  # for the DevTools performance panel (Load profile)
        Path(keep).write_bytes(raw)
    events = json.loads(raw)
    events = events["traceEvents"] if isinstance(events, dict) else events
    # The dashboard's renderer: the process that runs its script (the TV page and the login
    # page have renderers of their own).
    runs = Counter(e["pid"] for e in events if str(
        e.get("args", {}).get("data", {}).get("url", "")).endswith("/dashboard.js"))
    pid = runs.most_common(1)[0][0] if runs else None
    main = {(e["pid"], e["tid"]) for e in events if e.get("ph") == "M"
            and e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"
            and e["pid"] == pid}
    # Complete events, and the instant ones (console.timeStamp's marks).
    mine = [e for e in events if (e.get("pid"), e.get("tid")) in main
            and e.get("ph") in ("X", "I")]
    tasks: list[dict[str, Any]] = []
    for e in sorted((e for e in mine if e["name"] in ("RunTask", "ThreadControllerImpl::RunTask")
                     and e.get("dur", 0) > 0), key=lambda e: (e["ts"], -e["dur"])):
        if not tasks or e["ts"] >= tasks[-1]["ts"] + tasks[-1]["dur"]:  # the outermost only
            tasks.append(e)
    return events, pid, mine, tasks


ENTRY_POINTS = ("TimerFire", "EventDispatch", "FireAnimationFrame", "FunctionCall",
                "EvaluateScript", "MajorGC", "MinorGC", "V8.GC_MARK_COMPACTOR")


def task_entries(mine: list[dict[str, Any]], task: dict[str, Any], top: int = 3) -> str:
    """A task's script by its entry points (a timer, an event's type, a frame's callbacks, a
    function) and its collections, in ms, the biggest first."""
    start, end = task["ts"], task["ts"] + task["dur"]
    entries: Counter[str] = Counter()
    for e in mine:
        if start <= e["ts"] < end and e["name"] in ENTRY_POINTS:
            data = e.get("args", {}).get("data", {})
            label = e["name"] + (f" {data['type']}" if "type" in data else "") + (
                f" {data['functionName']}" if data.get("functionName") else "")
            entries[label] += e.get("dur", 0) / 1000
    return ", ".join(f"{label} {ms:.0f}" for label, ms in entries.most_common(top))


def tap_breakdown(mine: list[dict[str, Any]], tasks: list[dict[str, Any]],
                  taps: list[dict[str, Any]], slowest: int = 5) -> list[dict[str, Any]]:
    """Where the slowest taps' time went: each tap's main-thread tasks from its press to the
    frame that showed it (the probe's ``console.timeStamp`` marks that frame), each with its
    start after the press, its length, its style, layout, paint and script, and its entry
    points. The press is the mark's time less the tap's own figure (the event's time stamp:
    when the input reached the browser)."""
    marks = {e["args"]["data"].get("message", ""): e["ts"] for e in mine
             if e["name"] == "TimeStamp" and "data" in e.get("args", {})}
    found = []
    for tap in sorted(taps, key=lambda t: -t["ms"])[:slowest]:
        shown = marks.get(tap["mark"])
        if shown is None:
            found.append({"kind": tap["kind"], "ms": tap["ms"], "tasks": None})
            continue
        pressed = shown - tap["ms"] * 1000
        during = [t for t in tasks if t["ts"] + t["dur"] > pressed and t["ts"] < shown
                  and t["dur"] >= 500]  # the tasks that cost something (0.5 ms and over)
        found.append({"kind": tap["kind"], "ms": tap["ms"], "tasks": [
            {"at_ms": round((t["ts"] - pressed) / 1000, 1), "ms": round(t["dur"] / 1000, 1),
             **{part: round(_within(mine, t, names), 1) for part, names in TRACE_PARTS.items()},
             "what": task_entries(mine, t)} for t in during]})
    return found


def _within(mine: list[dict[str, Any]], task: dict[str, Any], names: tuple[str, ...]) -> float:
    """The ms of a task spent in events of these names (nested ones counted once)."""
    start, end = task["ts"], task["ts"] + task["dur"]
    inner = sorted((e["ts"], e["ts"] + e.get("dur", 0)) for e in mine
                   if e["name"] in names and start <= e["ts"] < end)
    total, reach = 0.0, start
    for begin, finish in inner:
        if finish > reach:
            total += finish - max(begin, reach)
            reach = finish
    return total / 1000


def trace_frames(browser: Any, page: Any, seconds: float,
                 keep: str | None = None) -> dict[str, Any]:
    """The page's main thread over ``seconds`` (Chromium's tracing, the DevTools timeline's
    events): its tasks' lengths, a tap's wait for the task under way when the finger lands,
    and what the long ones (a frame's 50 ms and over) spend their time on."""
    start_trace(browser)
    time.sleep(seconds)
    events, pid, mine, tasks = stop_trace(browser, keep)
    def within(task: dict[str, Any], names: tuple[str, ...]) -> float:
        return _within(mine, task, names)
    # The longest tasks' script by its entry points (a timer, an event's type, a frame's
    # callbacks, a function) and collections, in ms.
    for task in sorted(tasks, key=lambda t: -t["dur"])[:5]:
        task["_what"] = task_entries(mine, task)
    long_tasks = [t for t in tasks if t["dur"] >= 50_000]
    lengths = [t["dur"] / 1000 for t in tasks]
    wall = seconds * 1000
    in_tasks = sum(lengths)
    long_parts = {part: [within(t, names) for t in long_tasks]
                  for part, names in TRACE_PARTS.items()}
    layouts = [e for e in mine if e["name"] == "Layout" and e.get("dur", 0) > 0]
    def objects(e: dict[str, Any]) -> tuple[int, int]:
        data = e.get("args", {}).get("beginData", {})
        return int(data.get("dirtyObjects", 0)), int(data.get("totalObjects", 0))
    longest = sorted(tasks, key=lambda t: -t["dur"])[:5]
    return {
        "seconds": seconds, "tasks": len(tasks),
        "paint": painted(events, pid, mine, tasks),
        "busy_ms_per_s": round(in_tasks / seconds, 1),
        "task_p50_ms": round(percentile(lengths, 50), 1) if lengths else None,
        "task_p99_ms": round(percentile(lengths, 99), 1) if lengths else None,
        "task_max_ms": round(max(lengths), 1) if lengths else None,
        # The chance that a finger landing at a random moment finds a task of 50 ms or more
        # under way (and waits for the rest of it).
        "in_long_tasks_share": round(sum(t["dur"] for t in long_tasks) / 1000 / wall, 3),
        "long_tasks": len(long_tasks),
        "long_task_mean_ms": {part: round(sum(v) / len(v), 1) if v else None
                              for part, v in long_parts.items()} | {
            "all": round(sum(t["dur"] for t in long_tasks) / 1000 / len(long_tasks), 1)
            if long_tasks else None},
        "layouts": len(layouts),
        "layout_p99_ms": round(percentile([e["dur"] / 1000 for e in layouts], 99), 1)
        if layouts else None,
        "layout_objects_p50": [int(percentile([objects(e)[i] for e in layouts], 50))
                               for i in (0, 1)] if layouts else None,
        "longest": [{"ms": round(t["dur"] / 1000, 1),
                     **{part: round(within(t, names), 1) for part, names in TRACE_PARTS.items()},
                     "what": t.get("_what", "")} for t in longest]}


def measure_room(directory: Path, browser: Any, count: int, events: list[dict[str, Any]],
                 args: argparse.Namespace, biggest: bool) -> dict[str, Any]:
    # The hub here only: the room's processes (spawned) import this module, and the hub's
    # web framework cost each of them a second of CPU for nothing.
    from hub import auth
    from tablectl.hub_app import Hub, HubSettings

    broker = Broker(directory / f"broker-{count}").start()
    users = directory / f"users-{count}.toml"
    auth.save_user(users, "bench", "floor", "bench-password")
    auth.save_user(users, "floor2", "floor", "floor2-password")
    hub = Hub(HubSettings(venue=VENUE, db=str(directory / f"hub-{count}.db"), users=str(users),
                          port=broker.port, http_port=0)).start()
    room = Room(broker.port, count, events)
    names = [f"t{i}" for i in range(1, count + 1)]
    try:
        hub.connected.wait(30)
        room.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(
                1 for n in names if n in hub.floor.tables and hub.floor.tables[n].seats) < count:
            time.sleep(0.05)
        page = login(browser, hub.url, TABLET)
        counters = Counters(page)
        counters.throttle(args.cpu)
        reload_at = time.monotonic()
        page.reload()
        page.wait_for_function(f"() => document.querySelectorAll('#tables .table .seat-map')"
                               f".length >= {count}", timeout=120_000)
        first_draw = time.monotonic() - reload_at
        tv_link = hub.url + "/tv#" + tv_key(page)
        tv = tv_page(browser, tv_link)
        tv_counters = Counters(tv)
        tv_counters.throttle(args.cpu)
        idle = busy_over(counters, args.idle_seconds)
        room.deal()
        floor = FloorMember(hub.url, args.acknowledge_every)
        floor.start()
        time.sleep(args.warm_up)  # every table's first events in, the alerts begun
        start_memory = counters.collected()
        rng = random.Random(5)
        highest = dict(start_memory)
        updates_before = page.evaluate("() => window.__bench.updates")
        tv_before = tv_counters.read()

        # After a collection, every --memory-every seconds: whether what stays grows.
        samples = [{"s": 0.0, **start_memory}]
        began = time.monotonic()

        def sample() -> None:
            figures = counters.read()
            highest["heap_mb"] = max(highest["heap_mb"], round(figures["JSHeapUsedSize"] / 1e6, 2))
            highest["nodes"] = max(highest["nodes"], int(figures["Nodes"]))
            if time.monotonic() - began >= len(samples) * args.memory_every:
                samples.append({"s": round(time.monotonic() - began, 1), **counters.collected()})

        dealing = busy_over(counters, args.seconds, sample)
        tv_after = tv_counters.read()
        received = page.evaluate("() => window.__bench.updates") - updates_before
        end_memory = counters.collected()
        # Then the taps, the room still dealing: each measured by itself (a tap costs the page
        # more than an update: the table's hands are fetched and written out).
        timed_out = 0
        tracing_taps = biggest and args.trace_taps
        if tracing_taps:
            start_trace(browser)
        for _ in range(args.taps):
            try:
                tap_table(page, names, rng)
            except Exception as exc:  # (Playwright's timeout) a figure, not the run's end
                timed_out += 1
                print(f"a table's tap not shown within 30 s: {exc}".splitlines()[0],
                      file=sys.stderr)
                page.keyboard.press("Escape")  # the dialog closed, if it came after all
            tap_alert(page)
        taps = page.evaluate("() => { window.__benchEnd(); return window.__bench.taps; }")
        slow_taps = None
        if tracing_taps:
            _, _, mine, tasks = stop_trace(browser)
            slow_taps = tap_breakdown(mine, tasks, [
                {"kind": kind, "ms": ms, "mark": f"bench-tap-{index}"}
                for index, (kind, ms) in enumerate(taps) if kind in ("open", "ack")])
        floor.stop.set()
        floor.join(30)
        top = profile_top(counters, min(args.seconds, 20)) if biggest and args.profile else None
        if biggest and args.trace:  # the first screen, what a floor member watches
            page.evaluate("window.scrollTo(0, 0)")
        frames = (trace_frames(browser, page, args.trace, args.trace_file)
                  if biggest and args.trace else None)
        cards = page.evaluate("() => document.querySelectorAll('#tables .table').length")
        tv.context.close()
        page.context.close()
    finally:
        room.close()
        hub.stop()
        broker.kill()

    def tap_figures(kind: str) -> dict[str, Any]:
        times = [t for k, t in taps if k == kind]
        painted = [t for k, t in taps if k == kind + "-frame"]
        return {"taps": len(times), "missed": sum(1 for k, _ in taps if k == kind + "-missed"),
                "timed_out": timed_out if kind == "open" else 0,
                "p50_ms": round(percentile(times, 50), 1) if times else None,
                "p99_ms": round(percentile(times, 99), 1) if times else None,
                "frame_done_p50_ms": round(percentile(painted, 50), 1) if painted else None,
                "frame_done_p99_ms": round(percentile(painted, 99), 1) if painted else None}

    above_idle = max(0.0, dealing["busy_ms_per_s"] - idle["busy_ms_per_s"]) * dealing["wall_s"]
    return {
        "tables": count, "cards_drawn": cards, "first_draw_s": round(first_draw, 2),
        "idle": idle, "dealing": dealing, "updates_received": received,
        "alerts_acknowledged_by_the_floor": floor.acknowledged,
        "floor_rounds_failed": floor.failed_rounds,
        "busy_share_dealing": round(dealing["busy_ms_per_s"] / 1000, 3),
        "ms_per_update_above_idle": round(above_idle / received, 3) if received else None,
        "tap_open_table": tap_figures("open"), "tap_acknowledge": tap_figures("ack"),
        "memory": {"start": start_memory, "end": end_memory, "highest": highest,
                   "collected_every": samples},
        "tv_busy_ms_per_s": round((tv_after["TaskDuration"] - tv_before["TaskDuration"])
                                  / dealing["wall_s"] * 1000, 1),
        **({"profile": top} if top is not None else {}),
        **({"trace": frames} if frames is not None else {}),
        **({"slowest_taps": slow_taps} if slow_taps is not None else {})}


def tv_key(page: Any) -> str:
    """The TV link's key, as a supervisor or floor member makes it from the dashboard's API."""
    answer = page.evaluate("async () => { const r = await fetch('/api/tv-link'); "
                           "return r.ok ? await r.json() : null; }")
    if not answer or "path" not in answer:
        raise RuntimeError(f"the hub gave no TV link: {answer}")
    return str(answer["path"]).split("#", 1)[1]


def tv_page(browser: Any, link: str) -> Any:
    context = browser.new_context(viewport=TV)
    page = context.new_page()
    page.goto(link)
    page.wait_for_selector("#level", timeout=60_000)
    return page


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    receive("State", json.dumps(_state("t1", 1, 1, 1)))  # the bench's tables speak the contract
    events = _events(hands=60)
    rooms = [int(n) for n in args.rooms.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-dashboard-") as tmp, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.browser,
                                             args=["--no-sandbox"])
        try:
            for count in rooms:
                results.append(measure_room(Path(tmp), browser, count, events, args,
                                            count == max(rooms)))
        finally:
            browser.close()
    figures: dict[str, Any] = {"cpu_throttling": args.cpu, "rooms": results}
    small, big = min(results, key=lambda r: r["tables"]), max(results, key=lambda r: r["tables"])
    # None when there is no ratio to take: one room, or the small room's dealing cost nothing
    # measurable above its idle page (a machine busy elsewhere can make it so).
    figures["update_cost_ratio_big_over_small"] = (
        round(big["ms_per_update_above_idle"] / small["ms_per_update_above_idle"], 2)
        if big is not small and small["ms_per_update_above_idle"]
        and big["ms_per_update_above_idle"] is not None else None)
    return figures


def report(figures: dict[str, Any]) -> None:
    print(f"CPU throttled {figures['cpu_throttling']}x (a tablet's main thread)")
    for r in figures["rooms"]:
        memory = r["memory"]
        print(f"{r['tables']} tables ({r['cards_drawn']} drawn): first draw {r['first_draw_s']} s")
        print(f"  idle: main thread busy {r['idle']['busy_ms_per_s']} ms a second")
        d = r["dealing"]
        print(f"  dealing ({r['updates_received']} updates in {d['wall_s']} s): busy "
              f"{d['busy_ms_per_s']} ms a second (script {d['script_ms_per_s']}, style "
              f"{d['style_ms_per_s']}, layout {d['layout_ms_per_s']}); "
              f"{r['ms_per_update_above_idle']} ms an update above the idle page")
        for kind in ("tap_open_table", "tap_acknowledge"):
            t = r[kind]
            print(f"  {kind.replace('_', ' ')}: p50 {t['p50_ms']} ms, p99 {t['p99_ms']} ms "
                  f"to the frame; its style, layout and paint done: p50 "
                  f"{t['frame_done_p50_ms']} ms, p99 {t['frame_done_p99_ms']} ms "
                  f"({t['taps']} taps; {t['missed']} landed elsewhere, the list moved; "
                  f"{t['timed_out']} not shown within 30 s)")
        print(f"  the floor member on another tablet: {r['alerts_acknowledged_by_the_floor']} "
              f"alerts acknowledged, {r['floor_rounds_failed']} rounds failed")
        print(f"  heap {memory['start']['heap_mb']} -> {memory['end']['heap_mb']} MB (highest "
              f"{memory['highest']['heap_mb']}), nodes {memory['start']['nodes']} -> "
              f"{memory['end']['nodes']} (highest {memory['highest']['nodes']})")
        print("  collected, by seconds dealt: " + ", ".join(
            f"{m['s']:g} s {m['heap_mb']} MB {m['nodes']} nodes ({m['elements']} elements, "
            f"{m['log_lines']} log lines, {m['alert_items']} open alerts' items, "
            f"{m['acknowledged_items']} acknowledged)"
            for m in memory["collected_every"]))
        print(f"  the TV page (1920x1080): busy {r['tv_busy_ms_per_s']} ms a second")
        for heading, key in (("by self time", "self"), ("the dashboard's, by total time",
                                                          "dashboard_total")):
            if r.get("profile"):
                print(f"  profile over {r['profile']['seconds']} s, {heading}:")
                for line in r["profile"][key]:
                    print(f"    {line['ms']:>8} ms {line['share']:>6.1%}  {line['function']}")
        if r.get("trace"):
            t = r["trace"]
            p = t["paint"]
            print(f"  paint over the trace: {p['frames']} frames painted, each walking a view of "
                  f"{p['view_px']} px; repainted a frame, p50: {p['layers_repainted_p50']} "
                  f"layers, {p['repainted_px_p50']} px (p90 {p['repainted_px_p90']}, all "
                  f"{p['repainted_px_total']} px); {p['tiles_rastered_p50']} tiles rastered a "
                  f"frame (p50), {p['tiles_rastered_total']} in all; the most repainted: "
                  + ", ".join(f"{name} {px} px" for name, px in p["by_layer_px"].items()))
            print(f"  trace over {t['seconds']} s: {t['tasks']} tasks, busy "
                  f"{t['busy_ms_per_s']} ms a second; a task p50 {t['task_p50_ms']} ms, p99 "
                  f"{t['task_p99_ms']} ms, longest {t['task_max_ms']} ms; "
                  f"{t['in_long_tasks_share']:.1%} of the time in {t['long_tasks']} tasks of "
                  f"50 ms or more (where a finger waits)")
            m = t["long_task_mean_ms"]
            print(f"  a task of 50 ms or more, on average: {m['all']} ms (style {m['style']}, "
                  f"layout {m['layout']}, paint {m['paint']}, script {m['script']})")
            print(f"  {t['layouts']} layouts, p99 {t['layout_p99_ms']} ms; objects laid out, "
                  f"p50: {t['layout_objects_p50']} (dirty, of all)")
            print("  the longest tasks: " + "; ".join(
                f"{x['ms']} ms (style {x['style']}, layout {x['layout']}, paint {x['paint']}, "
                f"script {x['script']}; {x['what']})" for x in t["longest"]))
        for tap in r.get("slowest_taps", []):
            print(f"  a slow tap ({tap['kind']}), {tap['ms']:.1f} ms from the press to its "
                  "frame: " + ("not in the trace" if tap["tasks"] is None else "; ".join(
                      f"at {t['at_ms']} ms a task of {t['ms']} ms (style {t['style']}, layout "
                      f"{t['layout']}, paint {t['paint']}, script {t['script']}; {t['what']})"
                      for t in tap["tasks"])))
    if figures["update_cost_ratio_big_over_small"] is not None:
        print(f"one update's cost, the biggest room over the smallest: "
              f"{figures['update_cost_ratio_big_over_small']}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.dashboard",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", default="20,200", help="room sizes, comma-separated")
    parser.add_argument("--seconds", type=float, default=60.0, help="dealing, measured")
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--warm-up", type=float, default=5.0)
    parser.add_argument("--taps", type=int, default=20, help="of each kind, after the dealing")
    parser.add_argument("--cpu", type=float, default=4.0, help="CPU throttling rate")
    parser.add_argument("--memory-every", type=float, default=60.0,
                        help="seconds between the heap's and nodes' samples, collected")
    parser.add_argument("--acknowledge-every", type=float, default=10.0,
                        help="seconds between a floor member's rounds of the alerting tables")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--trace", type=float, default=0.0, metavar="SECONDS",
                        help="a trace of the biggest room's page dealing, after the taps")
    parser.add_argument("--trace-file", metavar="PATH",
                        help="where to keep that trace (DevTools' performance panel loads it)")
    parser.add_argument("--trace-taps", action="store_true",
                        help="trace the biggest room's taps: where the slowest five went")
    parser.add_argument("--browser", default=CHROMIUM, metavar="PATH",
                        help="the Chromium to drive: Debian's full browser, which the figures "
                             "were measured with (the tests, which check what the bench "
                             "counts, give it the headless shell)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = run(args)
    if args.json:
        print(json.dumps(figures))
    else:
        report(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
