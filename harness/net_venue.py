"""The simulated venue on a simulated network: the broker, the hub and every table each a host
of its own (``harness.netns``: network namespaces on one switch), the tables the real
daemon with the simulated shoe, the hub the real ``tablectl hub`` with its venue clock. The
faults are the venue's: a table's Wi-Fi losing packets or stalling, a table's cable pulled for
minutes, the hub's link down, the broker's host going down mid-level.

``Probe`` is the harness's own view of the broker (over a Unix socket beside the network):
it watches the venue clock and the tables' state snapshots, and sends the floor's clock
commands. ``check`` is the checker: it compares what the recorder holds with every table's
outbox and with a fault-free replay of what each daemon received, and the tables' clocks with
the hub's after each heal.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract import topics
from contract.envelope import event_of
from contract.wire import encode
from controller.replay import replay
from harness.netns import Host, Network
from houses.loaders import load_structure
from simulators.broker import Broker
from tablectl.sim_venue import SimTable, SimulatedVenue

CHECKOUT = Path(__file__).resolve().parents[1]  # the source checkout that holds the harness
VENUE = "sim"
BROKER_PORT = 1883
HUB_HTTP = "127.0.0.1:8080"  # inside the hub's host: no other run shares it
CLOCK_TOLERANCE = 1.0  # seconds a table's clock may differ from the hub's after a heal
# A heal's catching up: the tables reconnect (paho tries every 1-5 s), replay, and the hub's
# clock reaches them (it publishes every 5 s): what a heal usually takes, for planning only
# (1-8 s seen at load averages of 13-24, the clock's the last to agree).
SETTLE_AFTER_HEAL = 8.0
NO_FAULT = "no fault (the baseline)"


class HostBroker(Broker):
    """Mosquitto on a host of the simulated network: listening on the host's address, run by
    the command that runs a program there, with a Unix socket beside through which this process
    reaches it (a socket's path is the same in every network namespace)."""

    def __init__(self, directory: Path, host: Host, *, port: int) -> None:
        super().__init__(directory, port=port)
        self.address = host.address
        self.prefix = host.prefix()
        self.socket = self.directory / f"{self.name}.sock"

    def listeners(self) -> str:
        return f"listener {self.port} {self.address}\nlistener 0 {self.socket}\n"

    def command(self, conf: Path) -> list[str]:
        return [*self.prefix, *super().command(conf)]

    def probe(self) -> None:
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(0.2)
            probe.connect(str(self.socket))


class Probe:
    """The harness at the broker: the venue clock and every table's state as they arrive
    (each with this machine's wall time on receipt), and the floor's clock commands."""

    def __init__(self, socket_path: Path) -> None:
        from contract.mqtt import mqtt_client

        self.lock = threading.Lock()
        self.clock: list[tuple[float, dict[str, Any]]] = []
        self.states: dict[str, list[dict[str, Any]]] = {}
        self.answers: dict[str, dict[str, Any]] = {}
        self.client = mqtt_client(f"probe-{uuid.uuid4().hex[:8]}", transport="unix")
        self.client.on_message = self._message
        self.client.on_connect = self._subscribe
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)
        self.client.connect_async(str(socket_path), 1, keepalive=10)  # port unused
        self.client.loop_start()

    def _subscribe(self, client: Any, *_: Any) -> None:
        client.subscribe([(topics.venue_clock(VENUE), 1),
                          (topics.every_table(VENUE, "state"), 1),
                          (topics.hub(VENUE, "cmd-resp"), 1)])

    def _message(self, client: Any, userdata: Any, message: Any) -> None:
        now = time.time()
        try:
            body = json.loads(message.payload)
        except ValueError:
            return
        if not isinstance(body, dict):
            return
        with self.lock:
            if message.topic == topics.venue_clock(VENUE) and not message.retain:
                self.clock.append((now, body))
            elif (topic := topics.parse(message.topic)) is not None and \
                    topic.table is not None and topic.leaf == "state":
                self.states.setdefault(topic.table, []).append(body)
            elif isinstance(body.get("transaction"), str):
                self.answers[body["transaction"]] = body

    def command(self, action: str, value: object = None, timeout: float = 10) -> dict[str, Any]:
        """A floor clock command, answered by the hub."""
        transaction = uuid.uuid4().hex
        self.client.publish(topics.hub(VENUE, "cmd/clock"),
                            encode({"transaction": transaction, "action": action,
                                    "value": value}), qos=1)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if transaction in self.answers:
                    return self.answers[transaction]
            time.sleep(0.02)
        raise TimeoutError(f"the hub did not answer the clock command {action}")

    def clock_gaps(self, table: str, since: float) -> list[tuple[float, float]]:
        """(wall time, seconds apart) of each of ``table``'s snapshots after ``since`` that
        can be compared with the hub's clock, in order."""
        with self.lock:
            states = [s for s in self.states.get(table, []) if s.get("ts", 0) / 1000 >= since]
            clock = list(self.clock)
        gaps = []
        for state in sorted(states, key=lambda s: s["ts"]):
            at = state["ts"] / 1000
            hub = hub_period_end(clock, at)
            if hub is None or not isinstance(state.get("clock"), dict):
                continue
            gap = clock_difference(state["clock"], at, *hub)
            if gap is not None:
                gaps.append((at, gap))
        return gaps

    def clock_gap(self, table: str, since: float) -> tuple[float | None, float]:
        """When ``table``'s clock came to agree with the hub's after ``since`` (wall time;
        None if it has not, or disagreed again later), and the largest difference after."""
        agreed_at: float | None = None
        worst = 0.0
        for at, gap in self.clock_gaps(table, since):
            if gap > CLOCK_TOLERANCE:
                agreed_at, worst = None, 0.0  # the agreement that counts is the last one
            elif agreed_at is None:
                agreed_at, worst = at, gap
            else:
                worst = max(worst, gap)
        return agreed_at, worst

    def close(self) -> None:
        self.client.loop_stop()
        with contextlib.suppress(Exception):
            self.client.disconnect()


def hub_period_end(clock: list[tuple[float, dict[str, Any]]],
                   at: float) -> tuple[dict[str, Any], float] | None:
    """The hub's latest reading heard by wall time ``at``, and when its period ends: by the
    least delayed of the readings of the last 12 s that agree with it (a reading's trip to the
    probe only ever makes the end look later; a busy hub publishes late)."""
    heard = [(received, body) for received, body in clock if received <= at]
    if not heard:
        return None
    latest_at, latest = heard[-1]
    end = latest_at + float(latest["remaining"])
    period = (latest.get("level"), latest.get("on_break"), latest.get("running"))
    for received, body in reversed(heard):
        if received < at - 12.0:
            break
        if (body.get("level"), body.get("on_break"), body.get("running")) == period:
            candidate = received + float(body["remaining"])
            if end - 2.0 <= candidate < end:  # not a reading from before the floor's change
                end = candidate
    return latest, end


def clock_difference(table: dict[str, Any], at: float, hub: dict[str, Any],
                     hub_end: float) -> float | None:
    """How far apart a table's clock (its snapshot at wall time ``at``) and the hub's (its
    reading ``hub``, its period ending at ``hub_end``) put the end of the current period, in
    seconds; None when they cannot be compared: a clock paused or stopped, or one of them
    within a second of a period's edge that the other has crossed."""
    if not (table.get("running") and hub.get("running")):
        return None
    table_end = at + float(table["remaining"])
    if (table.get("level"), table.get("on_break")) != (hub.get("level"), hub.get("on_break")) \
            and min(table_end, hub_end) - at <= CLOCK_TOLERANCE:
        return None
    return abs(table_end - hub_end)


@dataclass
class Heal:
    """One fault's end, as measured: what healed, when, and how long the venue took to catch up."""

    what: str
    healed_at: float  # wall time
    tables: list[str]
    started: float  # monotonic time
    targets: dict[str, int]  # each table's last seq at the heal
    delivered_after: float | None = None  # seconds until the recorder held what they had
    clocks_after: dict[str, float | None] = field(default_factory=dict)
    clock_gaps: dict[str, float] = field(default_factory=dict)


class NetworkVenue(SimulatedVenue):
    def __init__(self, directory: Path, *, tables: int = 3, hands: int = 20, pace: float = 0.1,
                 seed: int = 1, irregularities: float = 0.25,
                 delayed: tuple[str, ...] | None = None, structure: str = "tda-2024",
                 quiet: bool = True, **kwargs: Any) -> None:
        super().__init__(directory, tables=tables, hands=hands, pace=pace, seed=seed,
                         irregularities=irregularities, structure=structure, quiet=quiet,
                         broker="none", recorder=False, venue_clock=True, **kwargs)
        # Tables whose link goes through a delaying proxy (the second, unless told).
        self.delayed = (f"t{self.first_table + 1}",) if delayed is None else delayed
        self.network: Network | None = None
        self.hosts: dict[str, Host] = {}
        self.hub_process: subprocess.Popen[str] | None = None
        self.hub_output: list[str] = []
        self.proxies: dict[str, subprocess.Popen[str]] = {}
        self.probe: Probe | None = None
        self.storage: Any = None
        self.heals: list[Heal] = []
        self.spikes = 0  # latency spikes played

    # ---------------------------------------------------------------- the hosts
    def start(self) -> NetworkVenue:
        from hub.storage import open_storage

        network = self.network = Network()
        try:
            for name in ("broker", "hub", *(f"t{self.first_table + i}"
                                             for i in range(self.table_count))):
                self.hosts[name] = network.add(name)
            broker = HostBroker(self.directory / "broker", self.hosts["broker"],
                                port=BROKER_PORT).start()
            self.broker, self.broker_mode = broker, "network"
            self.probe = Probe(broker.socket)
            self._start_hub()
            self.storage = open_storage(str(self.store))
            for index in range(1, self.table_count + 1):
                table = SimTable(self, index)
                if table.name in self.delayed:
                    self._start_proxy(table)
                table.write_config()
                table.launch_daemon()
                self.tables.append(table)
            for table in self.tables:  # (started side by side)
                table.await_daemon()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_hub(self) -> None:
        from hub.auth import save_user

        users = self.directory / "users.toml"
        save_user(users, "floor", "supervisor", "network-venue")
        self.store = self.directory / "hub.db"
        self.hub_process = subprocess.Popen(
            [*self.hosts["hub"].prefix(), sys.executable, "-m", "tablectl.cli", "hub",
             "--venue", VENUE, "--host", self.hosts["broker"].address,
             "--port", str(BROKER_PORT), "--db", str(self.store), "--users", str(users),
             "--http", HUB_HTTP, "--profile", self.profile_source,
             *(["--start", self.structure] if self.structure else [])],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        ready = threading.Event()

        def forward(process: subprocess.Popen[str]) -> None:
            assert process.stdout is not None
            for line in process.stdout:
                self.hub_output.append(line.rstrip("\n"))
                if line.startswith("hub for venue"):
                    ready.set()

        threading.Thread(target=forward, args=(self.hub_process,), daemon=True).start()
        if not ready.wait(60):
            raise RuntimeError("the hub did not start: " + "\n".join(self.hub_output[-20:]))
        # The clock is running before the first card: the tables follow it from the start.
        end = time.monotonic() + 30
        while not self.probe or not self.probe.clock:
            if time.monotonic() > end:
                raise RuntimeError("the hub's venue clock was not heard")
            time.sleep(0.05)

    def _start_proxy(self, table: SimTable) -> None:
        control = table.directory / "delay.sock"
        proxy = subprocess.Popen(
            [*self.hosts[table.name].prefix(), sys.executable, "-m", "harness.delay_proxy",
             "--listen", f"127.0.0.1:{BROKER_PORT}",
             "--to", f"{self.hosts['broker'].address}:{BROKER_PORT}",
             "--control", str(control)], stdout=subprocess.PIPE, text=True,
            # The harness is not installed: python -m finds it in the checkout it runs from.
            cwd=CHECKOUT)
        assert proxy.stdout is not None
        if not proxy.stdout.readline().startswith("delay proxy on"):
            raise RuntimeError(f"{table.name}: the delaying proxy did not start")
        self.proxies[table.name] = proxy

    def broker_address(self, table: SimTable) -> tuple[str, int]:
        if table.name in self.delayed:
            return "127.0.0.1", BROKER_PORT  # the table's own proxy, in its host
        return self.hosts["broker"].address, BROKER_PORT

    def host_prefix(self, table: SimTable) -> list[str]:
        return self.hosts[table.name].prefix()

    # ---------------------------------------------------------------- faults
    def delay(self, table: str, seconds: float) -> None:
        """Hold everything on ``table``'s link for ``seconds`` (0: no more)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as control:
            control.sendto(b"%.3f" % seconds,
                           str(self.directory / table / "delay.sock"))

    def cut(self, name: str) -> None:
        assert self.network is not None
        self.network.cut(name)

    def heal(self, name: str) -> None:
        assert self.network is not None
        self.network.heal(name)

    def loss(self, name: str, percent: int) -> None:
        assert self.network is not None
        self.network.loss(name, percent)

    def broker_down(self) -> None:
        """The broker's host goes down: mosquitto killed with what it held, its port dark."""
        assert self.broker is not None
        self.broker.kill()
        self.cut("broker")

    def broker_up(self) -> None:
        assert self.broker is not None
        self.heal("broker")
        self.broker.start()

    # ---------------------------------------------------------------- measuring
    def uptos(self) -> dict[str, int]:
        # The hub runs in a process of its own: its database says.
        return self.storage.table_uptos() if self.storage is not None else {}

    def healing(self, what: str, tables: list[str]) -> Heal:
        """Note a heal about to happen (call it just before): its moment, and what ``tables``
        had made by then, which the recorder must come to hold."""
        heal = Heal(what, time.time(), tables, time.monotonic(),
                    {t.name: t.last_seq() for t in self.tables if t.name in tables})
        self.heals.append(heal)
        return heal

    def converge(self, heal: Heal, timeout: float = 60) -> None:
        """Wait (to a deadline) until the recorder holds what the tables of ``heal`` had made
        when it came, and then until their clocks agree with the hub's: how long each took."""
        end = heal.started + timeout
        while time.monotonic() < end:
            upto = self.uptos()
            if all(upto.get(name, 0) >= seq for name, seq in heal.targets.items()):
                heal.delivered_after = round(time.monotonic() - heal.started, 2)
                break
            time.sleep(0.05)
        self.settle_clocks(heal)

    def settle_clocks(self, heal: Heal, timeout: float = 30) -> None:
        """Wait (to a deadline) until every table of ``heal`` agrees with the hub's clock, and
        write down how long after the heal it came to."""
        assert self.probe is not None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            results = {name: self.probe.clock_gap(name, heal.healed_at) for name in heal.tables}
            if all(at is not None for at, _ in results.values()):
                heal.clocks_after = {name: round(at - heal.healed_at, 2) if at else None
                                     for name, (at, _) in results.items()}
                heal.clock_gaps = {name: round(gap, 3) for name, (_, gap) in results.items()}
                return
            time.sleep(0.2)
        heal.clocks_after = {name: None for name in heal.tables}

    # ---------------------------------------------------------------- the end
    def stop(self) -> None:
        self.stop_tables()
        if self.hub_process is not None and self.hub_process.poll() is None:
            self.hub_process.terminate()
            try:
                self.hub_process.wait(20)
            except subprocess.TimeoutExpired:
                self.hub_process.kill()
        for proxy in self.proxies.values():
            proxy.kill()
            proxy.wait()
        if self.probe is not None:
            self.probe.close()
        if self.broker is not None:
            self.broker.kill()
        if self.storage is not None:
            self.storage.close()
            self.storage = None
        if self.network is not None:
            self.network.close()


# -------------------------------------------------------------------- the faults

@dataclass(frozen=True)
class Faults:
    """A session's faults, on the tables in order: the first loses packets the whole session,
    the second's link stalls now and then (through its delaying proxy), the third is cut off
    while dealing (the floor changes the clock meanwhile; its daemon is SIGKILLed and started
    again, its shoe unplugged, its configuration reloaded); the hub is cut from the broker,
    and the broker's host goes down, while the third is away."""

    loss_percent: int = 5
    spike_seconds: float = 0.4  # how long a stalled link holds each packet
    spike_every: float = 12.0
    spike_for: float = 3.0
    cut_seconds: float = 180.0
    hub_cut_seconds: float = 30.0
    broker_down_seconds: float = 10.0
    clock_added: float = 60.0  # the floor's change to the clock while the third table is away

    def seconds(self) -> float:
        """How long the faults take from the first card (the dealing must last longer)."""
        return 2.0 + max(self.cut_seconds, self.hub_cut_seconds + self.broker_down_seconds
                         + 2 * SETTLE_AFTER_HEAL)


def lossy_table(venue: NetworkVenue) -> str:
    return venue.tables[0].name


def delayed_table(venue: NetworkVenue) -> str:
    return venue.delayed[0]


def cut_table(venue: NetworkVenue) -> str:
    return venue.tables[2].name


def play_faults(venue: NetworkVenue, faults: Faults, stop: threading.Event) -> None:
    """The faults, in real time from the first card (``SimulatedVenue.run``'s chaos)."""
    start = time.monotonic()

    def at(second: float) -> None:
        stop.wait(max(0.0, start + second - time.monotonic()))

    calm = threading.Event()  # the stalls end with the faults
    spiking = threading.Thread(target=_spikes, args=(venue, faults, calm), daemon=True)
    spiking.start()
    lossy, away = lossy_table(venue), cut_table(venue)
    others = [t.name for t in venue.tables if t.name != away]
    # The baseline, in the same run: how far behind the recorder is with no fault at all.
    at(1.0)
    venue.converge(venue.healing(NO_FAULT, [t.name for t in venue.tables]))
    venue.loss(lossy, faults.loss_percent)
    at(2.0)
    venue.cut(away)
    cut_at = time.monotonic()
    venue.cut("hub")
    at(2.0 + faults.hub_cut_seconds)
    heal = venue.healing("the hub cut from the broker", others)
    venue.heal("hub")
    venue.converge(heal)
    venue.probe.command("add", faults.clock_added)  # type: ignore[union-attr]
    _process_faults(venue, stop)
    venue.broker_down()
    stop.wait(faults.broker_down_seconds)
    heal = venue.healing("the broker's host down", others)
    venue.broker_up()
    venue.converge(heal)
    stop.wait(max(0.0, cut_at + faults.cut_seconds - time.monotonic()))
    calm.set()
    spiking.join()
    heal = venue.healing(f"{away} cut off", [away])
    venue.heal(away)
    venue.converge(heal)


def _process_faults(venue: NetworkVenue, stop: threading.Event) -> None:
    """What happens to the cut-off table itself while it is away: its daemon SIGKILLed
    mid-hand and started again (with no network), its shoe's cable pulled for a second, its
    configuration reloaded (SIGHUP). It deals on from what its daemon received, no longer
    the script's every input (a press while the daemon is down is lost); the other two deal
    exactly their script through their lossy and stalling links."""
    away = venue.tables[2]
    away.kill_daemon()
    away.start_daemon()
    away.shoe.unplug()
    stop.wait(1.0)
    away.shoe.replug()
    if away.process is not None:
        away.process.send_signal(signal.SIGHUP)
    venue.off_script.add(away.name)


def _spikes(venue: NetworkVenue, faults: Faults, calm: threading.Event) -> None:
    table = delayed_table(venue)
    while not calm.wait(faults.spike_every - faults.spike_for):
        venue.delay(table, faults.spike_seconds)
        venue.spikes += 1
        calm.wait(faults.spike_for)
        venue.delay(table, 0.0)


# -------------------------------------------------------------------- the checker

def hands_of(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a hand came to: its rulings and its record (cards, board, burns, outcome)."""
    return ([("ruling", e["hand"], e["action"]) for e in events if e["type"] == "ruling"]
            + [("ended", e["hand"], e["outcome"], e["hole"], e["board"], e["burns"])
               for e in events if e["type"] == "hand.ended"])


def first_difference(scripted: list[tuple[Any, ...]], dealt: list[tuple[Any, ...]]) -> str:
    """Where two lists of ``hands_of`` part: what the next failure's reader needs (a
    difference seen once, under load, said no more than that it was there)."""
    for index, (want, got) in enumerate(zip(scripted, dealt, strict=False)):
        if want != got:
            return f"entry {index}: the script {want!r}, the table {got!r}"[:600]
    return (f"the script has {len(scripted)} entries, the table {len(dealt)} (next: "
            f"{(scripted[len(dealt):] or dealt[len(scripted):])[0]!r})")[:600]


def check(venue: NetworkVenue) -> dict[str, Any]:
    """The checker's findings, table by table; ``problems`` empty when the venue held up:
    every event of every outbox once and in order at the recorder, equal to the outbox's, the
    hands equal to a fault-free replay of the daemon's inputs (and to the dealer's script where
    no fault changed the dealing), the clocks within a second of the hub's after each heal and
    to the end."""
    problems: list[str] = []
    tables: dict[str, Any] = {}
    for table in venue.tables:
        journal, events = table.journal_and_events()
        stored = venue.storage.envelopes(table.name)
        seqs = [e["seq"] for e in stored]
        expected = list(range(1, len(events) + 1))
        missing = sorted(set(expected) - set(seqs))
        twice = len(seqs) - len(set(seqs))
        outbox = {seq: {"hand": None, "dealer": None, **event}
                  for seq, event in enumerate(events, start=1)}
        differing = sum(1 for e in stored if e["seq"] in outbox
                        and event_of(e) != outbox[e["seq"]])
        again = venue.replay_journal(journal)
        script = list(replay([json.dumps(line) for line in table.lines], venue.profile,
                             structure_loader=load_structure))
        tables[table.name] = {"events": len(events), "recorded": len(seqs),
                              "missing": len(missing), "stored_twice": twice,
                              "differing": differing, "boots": len({e["boot"] for e in stored}),
                              "hands_equal_replay": hands_of(again) == hands_of(events),
                              "hands_equal_script": hands_of(script) == hands_of(events),
                              "off_script": table.name in venue.off_script}
        if table.name not in venue.off_script and hands_of(script) != hands_of(events):
            problems.append(f"{table.name}: the hands differ from its dealer's script: "
                            + first_difference(hands_of(script), hands_of(events)))
        if missing:
            problems.append(f"{table.name}: {len(missing)} events never recorded "
                            f"(first {missing[:5]})")
        if twice:
            problems.append(f"{table.name}: {twice} events stored twice")
        if seqs != sorted(seqs) or (seqs and seqs != expected):
            problems.append(f"{table.name}: the recorder's seqs are not 1..{len(events)} in "
                            f"order")
        if differing:
            problems.append(f"{table.name}: {differing} recorded events differ from the outbox")
        if hands_of(again) != hands_of(events):
            problems.append(f"{table.name}: the hands differ from a fault-free replay of its "
                            "inputs")
    # Since the last heal, to the end of the session: each clock came to agree with the hub's
    # and stayed within the tolerance (a later disagreement would leave it unagreed).
    last_heal = max((heal.healed_at for heal in venue.heals), default=0.0)
    for name, found in tables.items():
        agreed, worst = venue.probe.clock_gap(name, last_heal) if venue.probe else (None, 0.0)
        found["clock_difference_at_end_s"] = round(worst, 3) if agreed is not None else None
        if agreed is None:
            # What the checker saw, so that a failure on a loaded machine says which way.
            seen = venue.probe.clock_gaps(name, last_heal) if venue.probe else []
            last = ", ".join(f"{gap:.2f} s at +{at - last_heal:.1f} s" for at, gap in seen[-4:])
            problems.append(f"{name}: its clock did not agree with the hub's at the end "
                            f"({len(seen)} comparable snapshots since the last heal; the last: "
                            f"{last or 'none'})")
    for heal in venue.heals:
        if heal.delivered_after is None:
            problems.append(f"after {heal.what}: the recorder did not catch up")
        for name, after in heal.clocks_after.items():
            if after is None:
                problems.append(f"after {heal.what}: {name}'s clock never came within "
                                f"{CLOCK_TOLERANCE} s of the hub's")
    return {"problems": problems, "tables": tables,
            "heals": [{"what": h.what, "tables": h.tables,
                       "delivered_after_s": h.delivered_after,
                       "clock_agrees_after_s": h.clocks_after,
                       "clock_difference_s": h.clock_gaps} for h in venue.heals]}
