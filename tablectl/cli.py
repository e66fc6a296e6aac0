"""``tablectl``: the table controller's command line.

Errors that are the user's (a bad line, an unknown profile, a bad file) print one clear message
on stderr and exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from contract import topics
from contract.topics import HUB_ANSWER_SECONDS
from houses import DEFAULT_PROFILE
from tablectl.signals import StopSignals

if TYPE_CHECKING:
    from controller.events import Event
    from controller.profiles import Profile
    from tablectl.hub_config import HubConfig

# The core is imported where a command uses it: the group's services (uplink, central), which
# never do, start 40-60 ms sooner without its dataclasses (five uplinks start at once).

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep it short
        self.print_usage(sys.stderr)
        print(f"tablectl: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _fail(message: str) -> int:
    print(f"tablectl: {message}", file=sys.stderr)
    return EXIT_USAGE


def _profile(name: str) -> Profile:
    from houses.loaders import load_profile

    return load_profile(name)


def cmd_replay(args: argparse.Namespace) -> int:
    from controller.profiles import ProfileError
    from controller.replay import ReplayError, dumps, replay
    from controller.table import TableConfig
    from houses.loaders import load_structure

    try:
        profile = _profile(args.profile)
    except ProfileError as exc:
        return _fail(str(exc))
    config = TableConfig(deal_gap=args.deal_gap, evaluate=not args.no_evaluate)
    stream: TextIO
    if args.file == "-":
        stream = sys.stdin
    else:
        try:
            stream = open(args.file, encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            return _fail(f"cannot read {args.file}: {exc.strerror}")
    out = sys.stdout
    try:
        for event in replay(stream, profile, config, structure_loader=load_structure):
            out.write(dumps(event))
            out.write("\n")
    except ReplayError as exc:
        out.flush()
        where = "stdin" if args.file == "-" else args.file
        return _fail(f"{where}: {exc}")
    except UnicodeDecodeError as exc:
        return _fail(f"{args.file}: not UTF-8 text ({exc.reason})")
    finally:
        if stream is not sys.stdin:
            stream.close()
    out.flush()
    return 0


def cmd_profiles(args: argparse.Namespace) -> int:
    from controller.profiles import RULES, ProfileError
    from houses.loaders import builtin_names

    try:
        profiles = [_profile(name) for name in builtin_names()]
        if args.file:
            profiles.append(_profile(args.file))
    except ProfileError as exc:
        return _fail(str(exc))
    if args.show:
        try:
            profile = _profile(args.show)
        except ProfileError as exc:
            return _fail(str(exc))
        return _show_profile(profile, args.json)
    if args.json:
        print(json.dumps({p.name: {k: r.value for k, r in p.rules.items()} for p in profiles},
                         indent=2))
        return 0
    print(f"Profiles (default: {DEFAULT_PROFILE})\n")
    for p in profiles:
        base = f"inherits {p.inherits}" if p.inherits else "complete"
        print(f"  {p.name:<20} {p.title} ({base})")
    print("\nWhere they differ (rule: value -> profiles):\n")
    for key, spec in RULES.items():
        values: dict[str, list[str]] = {}
        for p in profiles:
            value = p.rules[key].value
            text = (f"{value['seconds']:g}s + {value['countdown']:g}s"
                    if isinstance(value, dict) else str(value))
            values.setdefault(text, []).append(p.name)
        if len(values) < 2:
            continue
        print(f"  {key} (SPEC row {spec.row}: {spec.question})")
        for text, names in values.items():
            print(f"      {text:<36} {', '.join(names)}")
    same = [k for k in RULES if len({json.dumps(p.rules[k].value) for p in profiles}) == 1]
    print("\nThe same everywhere: " + ", ".join(same))
    print("\n`tablectl profiles --show NAME` lists one profile's rules with their sources.")
    return 0


def _show_profile(profile: Profile, as_json: bool) -> int:
    if as_json:
        print(json.dumps({
            "name": profile.name, "title": profile.title, "inherits": profile.inherits,
            "base_note": profile.base_note,
            "rules": {k: {"value": r.value, "source": r.source, "quote": r.quote or None,
                          "defined_in": r.defined_in} for k, r in profile.rules.items()},
        }, indent=2))
        return 0
    print(f"{profile.name}: {profile.title}")
    if profile.base_note:
        print(f"  {profile.base_note}")
    print(f"  inheritance: {' -> '.join(profile.chain)}\n")
    for key, rule in profile.rules.items():
        value = rule.value
        text = (f"{value['seconds']:g}s + {value['countdown']:g}s countdown"
                if isinstance(value, dict) else value)
        print(f"  {key}: {text}")
        print(f"      source: {rule.source}" + (f"  [from {rule.defined_in}]"
                                                if rule.defined_in != profile.name else ""))
        if rule.quote:
            print(f"      \"{rule.quote}\"")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    import random

    from controller.events import HandEnded, Irregularity, Ruling
    from controller.profiles import ProfileError
    from controller.replay import ReplayError, replay_events
    from houses.loaders import load_structure
    from simulators.dealer_script import session_lines

    try:
        profile = _profile(args.profile)
    except ProfileError as exc:
        return _fail(str(exc))
    rng = random.Random(args.seed)
    script = session_lines(rng, profile, hands=args.hands, game=args.game,
                           irregularity_rate=args.irregularities, clock=args.structure,
                           brisk=args.shoe)
    lines = [json.dumps(x) for x in script]
    if args.shoe:
        events_source = _through_simulated_shoe(script, args)
    else:
        events_source = replay_events(lines, profile, structure_loader=load_structure)
    counts: dict[str, int] = {}
    rulings: dict[str, int] = {}
    outcomes: dict[str, int] = {}
    hands: set[object] = set()
    base: float | None = None  # narration times count from the first event
    try:
        for event in events_source:
            match event:
                case HandEnded(hand=hand, outcome=outcome):
                    hands.add(hand)
                    outcomes[outcome] = outcomes.get(outcome, 0) + 1
                case Irregularity(kind=kind):
                    counts[kind] = counts.get(kind, 0) + 1
                case Ruling(action=action):
                    rulings[action] = rulings.get(action, 0) + 1
            if not args.quiet:
                t = getattr(event, "t", None)
                if base is None and isinstance(t, int | float):
                    base = float(t)
                print(_describe(event, base or 0.0))
    except ReplayError as exc:  # a generator bug, not the user's: say so plainly
        return _fail(f"the generated session did not replay: {exc}")
    print(f"\n{len(hands)} hands under profile {profile.name}; "
          f"deals: {json.dumps(outcomes, sort_keys=True)}; "
          f"irregularities: {json.dumps(counts, sort_keys=True)}; "
          f"rulings: {json.dumps(rulings, sort_keys=True)}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from pathlib import Path

    from controller.screens import sample_screens
    from hardware.display import lcd_preview, render_lcd, render_oled

    # A ruling pages differently on each display (five lines under the title, or two).
    oled_screens, lcd_screens = sample_screens("oled"), sample_screens("lcd")
    known = sorted(set(oled_screens) | set(lcd_screens))
    names = known if args.all or not args.screen else args.screen
    unknown = [n for n in names if n not in known]
    if unknown:
        return _fail(f"no screen named {', '.join(unknown)} (screens: {', '.join(known)})")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from PIL import Image

    scale = max(1, args.scale)
    for name in names:
        made = []
        if name in oled_screens:
            oled = render_oled(oled_screens[name])
            if not args.golden:
                oled = oled.convert("L").resize((oled.width * scale, oled.height * scale),
                                                Image.Resampling.NEAREST)
            oled.save(out / f"{name}.oled.png")
            made.append(f"{out / name}.oled.png")
        if name in lcd_screens:
            lines = render_lcd(lcd_screens[name])
            if args.golden:
                (out / f"{name}.lcd.txt").write_text("\n".join(lines) + "\n", encoding="ascii")
            else:
                lcd_preview(lines, scale=max(1, scale // 2)).save(out / f"{name}.lcd.png")
            made.append("lcd: " + " | ".join(x.rstrip() for x in lines))
        print(f"{name}: " + ", ".join(made))
    return 0


def _until_stopped(unhealthy: Callable[[], str | None] | None = None,
                   stop: StopSignals | None = None) -> int:
    """Wait for SIGTERM or Ctrl-C (``stop``, installed here unless given) while a hub service
    runs in its own threads; the exit status: 0, or 70 when one of its workers died (systemd
    then restarts the service). Under systemd, READY=1 now, and WATCHDOG=1 while
    ``unhealthy`` finds nothing wrong."""
    import time

    from contract.supervise import EXIT_WORKER_DIED, FAILED, SystemdNotifier, failures

    notifier = SystemdNotifier()
    notifier.send("READY=1")
    last_ping = 0.0
    said: str | None = None
    stop = stop or StopSignals().install()
    while not stop.wait(0.5):
        if notifier.watchdog and time.monotonic() - last_ping >= notifier.watchdog:
            last_ping = time.monotonic()
            problem = unhealthy() if unhealthy is not None else None
            if problem is None:
                notifier.send("WATCHDOG=1")
            elif problem != said:  # no ping: systemd restarts the service
                print(f"not healthy, no watchdog ping: {problem}", file=sys.stderr,
                      flush=True)
            said = problem
        if FAILED.is_set():
            print("a worker died, stopping so that systemd restarts the service: "
                  + "; ".join(failures), file=sys.stderr, flush=True)
            return EXIT_WORKER_DIED
    return 0


def _hub_config(command: str, args: argparse.Namespace) -> HubConfig:
    """The command's configuration: its --config file with the flags given over it (a
    HubConfigError, every problem listed, is the user's: main says it)."""
    from tablectl.hub_config import hub_config

    return hub_config(command, args)


def cmd_recorder(args: argparse.Namespace) -> int:
    """The hub's recorder (the minimal one of the reporting issue), until SIGTERM or Ctrl-C."""
    from contract.mqtt import tls_settings
    from hub.recorder import Recorder

    config = _hub_config("recorder", args)
    mqtt, db, venue = config.mqtt, config.storage.db, config.venue.id
    assert venue is not None  # required
    # The recorder's identity: recorder_cert and recorder_key, else cert and key.
    tls = tls_settings(mqtt.ca, mqtt.recorder_cert or mqtt.cert, mqtt.recorder_key or mqtt.key)
    recorder = Recorder(db, venue=venue, host=mqtt.host, port=mqtt.port, tls=tls,
                        client_id=args.client_id).start()
    print(f"recorder for venue {venue} on {mqtt.host}:{mqtt.port}, storing in "
          f"{db.split('@')[-1]}",
          file=sys.stderr, flush=True)
    status = _until_stopped()
    recorder.stop()
    print(json.dumps({"stored": recorder.stats.stored, "duplicates": recorder.stats.duplicates,
                      "replay_requests": recorder.stats.replay_requests}), file=sys.stderr)
    return status


def _cluster_endpoint(config: HubConfig, name: str, user: str) -> Any:
    """The group's cluster (``deploy/cluster``): its nodes (group.cluster, tried in turn), the
    user (``user`` unless group.user says) and the password in group.password_file; ``name``
    is the connection's name at the cluster."""
    from pathlib import Path

    from group.link import GroupEndpoint
    from tablectl.hub_config import HubConfigError
    from tablectl.secret_files import loose_secret

    group = config.group
    problems = []
    password = None
    if group.password_file:
        loose = loose_secret(group.password_file, "the cluster user's password")
        if loose is not None:
            problems.append(f"group.password_file: {loose}")
        try:
            password = Path(group.password_file).read_text().strip()
        except OSError as exc:
            problems.append(f"group.password_file: {exc.strerror}: {group.password_file}")
    if group.ca and not Path(group.ca).is_file():
        problems.append(f"group.ca: no such file: {group.ca}")
    if problems:
        raise HubConfigError("(its files)", problems)
    # (An IPv6 node is written in brackets, as in a URL: what nats-py takes.)
    return GroupEndpoint(servers=tuple(group.cluster), user=group.user or user,
                         password=password, ca_file=group.ca, name=name)


def _cluster_options(p: argparse.ArgumentParser, user: str | None) -> None:
    p.add_argument("--cluster", metavar="HOST:PORT,...",
                   help="the group's cluster nodes (their NATS client port), tried in turn "
                        "(group.cluster)")
    p.add_argument("--user", help=f"the cluster user (group.user; default "
                                  f"{user or 'venue-VENUE'})")
    p.add_argument("--password-file", metavar="FILE",
                   help="the cluster user's password (group.password_file)")
    p.add_argument("--ca", metavar="FILE",
                   help="the group CA's certificate: TLS to the cluster, its nodes verified "
                        "(group.ca; without it, plain TCP: a private network only)")


def cmd_central(args: argparse.Namespace) -> int:
    """The group's central recorder, until SIGTERM or Ctrl-C."""
    import logging
    import time

    from group.centre import CentralRecorder

    config = _hub_config("central", args)
    endpoint = _cluster_endpoint(config, config.central.client_id, "central")
    db = config.central.db
    assert db is not None  # required
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    # nats-py reads the cluster 32 kB at a time on its own thread, and waits for the GIL at
    # each read while the worker checks and stores (5 ms by default): a venue sending fast
    # then held the other venues' messages in the node's buffer for the centre (another
    # venue's slowest answer 1.0-1.5 s under tests/test_group_fairness.py's flood; at 0.5 ms
    # 0.6-0.75 s, the reading keeps up and the venues' shares decide).
    sys.setswitchinterval(0.0005)
    recorder = CentralRecorder(db, endpoint).start()
    print(f"central recorder on the cluster {','.join(config.group.cluster)}, storing in "
          f"{db.split('@')[-1]}", file=sys.stderr, flush=True)
    status = _until_stopped(recorder.unhealthy)
    recorder.stop()
    stats = recorder.stats
    print(json.dumps({"received": stats.received, "stored": stats.stored,
                      "duplicates": stats.duplicates, "refused": stats.refused,
                      "asked_again": stats.asked_again, "not_taken": stats.not_taken,
                      "cpu_seconds": round(time.process_time(), 2)}), file=sys.stderr)
    return status


def cmd_uplink(args: argparse.Namespace) -> int:
    """A venue's uplink to the group's cluster, until SIGTERM or Ctrl-C."""
    import logging
    import time

    from group.uplink import Uplink

    config = _hub_config("uplink", args)
    venue, db = config.venue.id, config.storage.db
    assert venue is not None  # required
    endpoint = _cluster_endpoint(config, f"uplink-{venue}", f"venue-{venue}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    uplink = Uplink(venue, db, config.uplink.state, endpoint).start()
    print(f"uplink of venue {venue}: {db.split('@')[-1]} to the cluster "
          f"{','.join(config.group.cluster)}", file=sys.stderr, flush=True)
    status = _until_stopped(uplink.unhealthy)
    uplink.stop()
    print(json.dumps({"messages": uplink.stats.messages, "events": uplink.stats.events,
                      "held": uplink.stats.acknowledged,
                      "sent_again": uplink.stats.sent_again,
                      "unanswered": uplink.stats.unanswered,
                      "cpu_seconds": round(time.process_time(), 2)}), file=sys.stderr)
    return status


def cmd_run(args: argparse.Namespace) -> int:
    from controller.profiles import ProfileError
    from tablectl.config import ConfigError
    from tablectl.daemon import main_run

    try:
        return main_run(args.config)
    except ConfigError as exc:
        return _fail(str(exc))
    except ProfileError as exc:
        return _fail(f"configuration {args.config}: table.profile: {exc}")


def cmd_doctor(args: argparse.Namespace) -> int:
    from tablectl.config import ConfigError, load_config
    from tablectl.doctor import FAIL, run_checks

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"[FAIL] config: {exc}")
        return 1
    checks = run_checks(config)
    for check in checks:
        print(check.line())
    failed = [c.part for c in checks if c.result == FAIL]
    print(f"\n{len(failed)} part(s) failing" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def cmd_sim(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from tablectl.sim_venue import SimulatedVenue

    # SIGTERM (systemctl stop, kill, a supervisor) stops it as Ctrl-C does: its broker and
    # daemons with it, and the summary printed. (Without a handler, SIGTERM ended the process
    # where it stood: its Mosquitto and table daemons ran on, and nothing was said.)
    stop = StopSignals().install()

    if args.featured and not args.dashboard:
        raise SystemExit("--featured needs --dashboard HOST:PORT: the feed is the hub's")
    if not 0 <= args.delay <= 86_400:
        raise SystemExit("--delay: seconds from 0 to 86400 (a day)")
    with tempfile.TemporaryDirectory(prefix="tablectl-sim-") as tmp:
        directory = Path(args.dir) if args.dir else Path(tmp)
        venue = SimulatedVenue(directory, tables=args.tables, hands=args.hands,
                               profile=args.profile, pace=args.pace,
                               broker="none" if args.no_broker else "auto", seed=args.seed,
                               irregularities=args.irregularities, structure=args.structure,
                               quiet=args.quiet, dashboard=args.dashboard,
                               featured=args.featured, feed_delay=args.delay)
        try:
            venue.start()
            if not stop.is_set():
                venue.say(f"{args.tables} table(s), {args.hands} hands each, profile "
                          f"{args.profile}, at {1 / args.pace:g}x a dealer's pace; Ctrl-C stops")
                venue.run(stop_requested=stop.is_set)
            delivered = venue.wait_delivered(stop_requested=stop.is_set)
            interrupted = stop.is_set()
            if interrupted:  # stopped mid-deal: what was dealt so far still goes (a moment)
                delivered = venue.wait_delivered(5)
            summary = venue.summary()
            if venue.hub is not None and not interrupted:
                venue.say(f"the hands are dealt; the dashboard stays at {venue.hub.url} "
                          "until Ctrl-C")
                _until_stopped(stop=stop)
        finally:
            venue.stop()
    for name, table in summary["tables"].items():
        where = (f"{table['delivered']}/{table['events']} events at the recorder"
                 if summary["broker"] else f"{table['events']} events in the local outbox")
        print(f"{name}: {table['hands']} hands; irregularities "
              f"{json.dumps(table['irregularities'], sort_keys=True)}; {where}")
    for line in _sim_closing(summary, args):
        print(line)
    if interrupted:
        print(f"stopped by {stop.by} before every hand was dealt" + (
            "; every event dealt so far reached the recorder" if summary["broker"] and delivered
            else "; some events had not reached the recorder yet" if summary["broker"] else ""))
        return 130
    if summary["broker"] and not delivered:
        return _fail("not every event reached the recorder")
    return 0


def _sim_closing(summary: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """Where the simulated tables' events went, and how to see the floor's side of them."""
    tables = summary["tables"].values()
    if args.dir:
        lines = ["each table's journal and outbox (SQLite): "
                 + ", ".join(str(t["database"]) for t in tables)]
        if summary["store"] is not None:
            lines.append("the recorder's copy, through a private Mosquitto (SQLite, table "
                         f"events): {summary['store']}")
    else:
        lines = [("the events went through a private Mosquitto to the recorder; its database "
                  "and each table's outbox" if summary["store"] is not None else
                  "each table's outbox (no broker)") +
                 " were in a temporary folder, removed now: --dir DIR keeps them"]
    if not args.dashboard:
        # The name this command was run by (.venv/bin/tablectl after make demo).
        prog = sys.argv[0] if os.path.basename(sys.argv[0]) == "tablectl" else "tablectl"
        lines.append(f"the floor dashboard while the tables deal: {prog} sim --dashboard "
                     "127.0.0.1:8080, then open http://127.0.0.1:8080 with the login it prints")
    return lines


def _config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE",
                   help="the hub's configuration (deploy/hub/hub.toml); each flag given "
                        "overrides its key")


def _mqtt_options(p: argparse.ArgumentParser) -> None:
    _config_option(p)
    p.add_argument("--venue", help="the venue id in the MQTT topics (venue.id)")
    p.add_argument("--host", help="the venue's broker (mqtt.host; default 127.0.0.1)")
    p.add_argument("--port", type=int, help="its port (mqtt.port; default 1883)")
    p.add_argument("--ca", help="the venue CA's certificate (mqtt.ca)")
    p.add_argument("--cert", help="this service's certificate (mqtt.cert)")
    p.add_argument("--key", help="its key (mqtt.key)")


def _broker_tls(config: HubConfig) -> Any:
    from contract.mqtt import tls_settings

    return tls_settings(config.mqtt.ca, config.mqtt.cert, config.mqtt.key)


def cmd_venue_clock(args: argparse.Namespace) -> int:
    """The hub's venue clock service, until SIGTERM or Ctrl-C."""
    from hub.venue_clock import VenueClockService

    config = _hub_config("venue-clock", args)
    mqtt, venue = config.mqtt, config.venue.id
    assert venue is not None  # required
    service = VenueClockService(venue=venue, host=mqtt.host, port=mqtt.port,
                                tls=_broker_tls(config)).start()
    if config.clock.start:
        service.connected.wait(10)
        service.apply("start", config.clock.start)
    print(f"venue clock for {venue} on {mqtt.host}:{mqtt.port}", file=sys.stderr, flush=True)
    status = _until_stopped()
    service.stop()
    return status


def cmd_clock(args: argparse.Namespace) -> int:
    """Send a command to the venue clock and print its answer."""
    import math
    import threading
    import uuid

    from contract.mqtt import mqtt_client
    from contract.schema import ContractError, receive
    from contract.wire import encode

    config = _hub_config("clock", args)
    mqtt, venue = config.mqtt, config.venue.id
    assert venue is not None  # required
    raw: str | None = args.value
    value: object = raw
    if args.action in ("add", "level") and raw is not None:
        try:
            value = float(raw) if args.action == "add" else int(raw)
        except ValueError:
            return _fail(f"clock {args.action}: {raw!r} is not a number")
        if not math.isfinite(value):
            return _fail(f"clock {args.action}: {raw!r} is not a finite number")
    answer: list[dict[str, object]] = []
    done = threading.Event()
    transaction = uuid.uuid4().hex
    client = mqtt_client(tls=_broker_tls(config))

    def on_message(c: object, u: object, msg: Any) -> None:
        try:
            body = receive("CommandResponse", msg.payload)
        except ContractError:
            return  # not an answer of the contract: not ours
        if body.get("transaction") == transaction:
            answer.append(body)
            done.set()

    client.on_message = on_message
    try:
        client.connect(mqtt.host, mqtt.port)
    except OSError as exc:
        return _fail(f"cannot reach the broker at {mqtt.host}:{mqtt.port}: {exc}")
    client.subscribe(topics.hub(venue, "cmd-resp"), qos=1)
    client.loop_start()
    # The subscription goes out before the command on the same connection: the broker
    # has it in place by the time the answer is published.
    client.publish(topics.hub(venue, "cmd/clock"),
                   encode({"transaction": transaction, "action": args.action,
                           "value": value}), qos=1)
    # As long as the hub's own web requests wait for its floor: a hub just started, on a
    # crowded machine, took more than 5 s to answer.
    got = done.wait(HUB_ANSWER_SECONDS)
    # Disconnected first: the network thread sends DISCONNECT and ends at once (stopped
    # first, it waits out its socket's one-second select).
    client.disconnect()
    client.loop_stop()
    if not got:
        return _fail(f"no answer from the venue clock in {HUB_ANSWER_SECONDS:g} s (is the hub, "
                     "or `tablectl venue-clock`, running for this venue? If so it is busy: "
                     "try again)")
    print(json.dumps(answer[0]))
    return 0 if answer[0].get("ok") else 1


def cmd_hub(args: argparse.Namespace) -> int:
    """The venue hub: recorder, venue clock and the floor dashboard, until SIGTERM or Ctrl-C."""
    from controller.clock import StructureError
    from controller.profiles import ProfileError
    from houses.loaders import house_structure
    from hub.auth import UsersFileError
    from hub.venue_clock import ClockError
    from tablectl.hub_app import Hub
    from tablectl.hub_config import HubConfigError

    config = _hub_config("hub", args)
    settings = config.hub_settings()
    start = config.clock.start
    # Every problem at once, whichever part finds it: the files it reads, the users file
    # and the house's profile (read as the hub is built: nothing started), the structure.
    problems = config.unreadable()
    hub: Hub | None = None
    try:
        hub = Hub(settings)
    except (UsersFileError, ProfileError) as exc:
        problems += [f"{exc.subject} {exc.origin}: {problem}" for problem in exc.problems]
    if start:
        try:
            house_structure(start, config.floor.structures)
        except StructureError as exc:
            problems += [f"clock.start {start}: {problem}" for problem in exc.problems]
    if problems or hub is None:
        raise HubConfigError(args.config or "(the command line)", problems)
    if args.check:
        web = "HTTPS" if settings.web_cert else "HTTP"
        print(f"hub configuration {args.config or '(the command line)'}: OK: venue "
              f"{settings.venue}, broker {settings.host}:{settings.port} "
              f"({'TLS' if settings.tls else 'no TLS'}), storing in "
              f"{settings.db.split('@')[-1]}, dashboard on {config.dashboard.listen} ({web}), "
              f"{len(hub.sessions.users)} staff in {settings.users}")
        return 0
    try:
        hub.start()
    except OSError as exc:
        return _fail(f"the dashboard cannot listen on {config.dashboard.listen}: {exc}")
    if start and not hub.clock.known:  # a kept clock resumes instead
        hub.clock.connected.wait(10)
        try:
            hub.clock.apply("start", start)
        except ClockError as exc:
            hub.stop()
            return _fail(f"clock.start {start}: {exc}")
    print(f"hub for venue {settings.venue}: broker {settings.host}:{settings.port}, storing "
          f"in {settings.db.split('@')[-1]}, dashboard at {hub.url}", file=sys.stderr,
          flush=True)
    status = _until_stopped(hub.unhealthy)
    hub.stop()
    return status


def cmd_hub_user(args: argparse.Namespace) -> int:
    """Add a staff member to the dashboard's users file, or change their role or password."""
    import getpass

    from hub.auth import UsersFileError, save_user

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != password:
            return _fail("the two passwords differ")
    try:
        save_user(args.users, args.name, args.role, password)
    except (ValueError, UsersFileError) as exc:
        return _fail(str(exc))
    print(f"{args.name} ({args.role}) saved in {args.users}")
    return 0


BENCHES = {"latency": "mqtt", "outage": "mqtt", "replay": "replay_throughput",
           "shoe": "shoe_link", "display": "display", "footprint": "footprint",
           "venue": "venue", "contract": "contract", "start": "start"}
# The lab's, from a source checkout with the development extras (tests/bench).
LAB_BENCHES = {"network": "network", "multi-venue": "multi_venue", "shoe-memory": "shoe_memory"}


def _bench_needs(which: str) -> str | None:
    """What a benchmark needs that this machine lacks, said as what to install."""
    import importlib.util
    import shutil

    if which in ("latency", "outage", "venue") and shutil.which("mosquitto") is None and \
            not os.path.exists("/usr/sbin/mosquitto"):
        return "Mosquitto, which it starts on a free port of its own (apt install mosquitto)"
    if which == "venue" and any(importlib.util.find_spec(name) is None
                                for name in ("fastapi", "psycopg")):
        return "the hub's extras: it measures a hub (pip install '.[hub]')"
    return None


def cmd_bench(args: argparse.Namespace) -> int:
    """Run a benchmark command: installed with the package (tablectl/bench)."""
    import subprocess

    if args.which in LAB_BENCHES:
        return _fail(f"{args.which} is a lab benchmark, run from a source checkout with the "
                     f"development extras: python -m tests.bench.{LAB_BENCHES[args.which]}")
    module = BENCHES[args.which]
    missing = _bench_needs(args.which)
    if missing:
        return _fail(f"the {args.which} benchmark needs {missing}")
    argv = ([args.which] if module == "mqtt" else []) + args.rest
    # A process of its own, as `python -m`: a benchmark that starts worker processes (venue)
    # needs its module importable by name in them, which runpy's __main__ is not.
    return subprocess.call([sys.executable, "-m", f"tablectl.bench.{module}", *argv])


def _through_simulated_shoe(script: list[dict[str, object]],
                            args: argparse.Namespace) -> Iterator[Event]:
    """Play the script through the simulated shoe on a pty: firmware code, serial link,
    codec and the table daemon, live; yield events as the table commits them."""
    import queue
    import tempfile
    import threading
    from pathlib import Path

    from controller.events import from_json
    from tablectl.sim_table import SimulatedTable

    events: queue.Queue[dict[str, object] | None] = queue.Queue()

    def run(directory: str) -> None:
        table = SimulatedTable(Path(directory), args.profile, scale=args.pace,
                               on_event=events.put)
        try:
            table.play(script)
        finally:
            table.close()
            events.put(None)

    with tempfile.TemporaryDirectory(prefix="tablectl-demo-") as directory:
        print(f"simulated shoe on a pty ({directory}/shoe), dealing at {1 / args.pace:g}x "
              "speed; no broker yet: events are printed here", file=sys.stderr)
        threading.Thread(target=run, args=(directory,), daemon=True).start()
        while (event := events.get()) is not None:
            yield from_json(event)  # as the simulated table's outbox holds it


def _describe(event: Event, base: float = 0.0) -> str:
    from controller.events import (
        Card,
        CardIrregularity,
        HandEnded,
        HandRecord,
        HandStarted,
        Irregularity,
        Level,
        Ruling,
    )

    t = getattr(event, "t", None)
    stamp = f"{t - base:9.1f}s" if isinstance(t, int | float) else " " * 10
    match event:
        case Card(hand=hand, n=n, card=card, role=role, seat=seat, street=street):
            where = f"seat {seat}" if seat is not None else street
            return f"{stamp}  hand {hand:>3}  #{n:<3} {card} {role:<5} {where}"
        case Ruling(hand=hand, text=text):
            return f"{stamp}  hand {hand:>3}  >>> {text}"
        case CardIrregularity(hand=hand, kind=kind, card=drawn):
            return f"{stamp}  hand {hand:>3}  !!! {kind} ({drawn})"
        case Irregularity(hand=hand, kind=kind):
            return f"{stamp}  hand {hand:>3}  !!! {kind}"
        case HandEnded(hand=hand, outcome=outcome, board=board):
            return f"{stamp}  hand {hand:>3}  ended: {outcome}, board {' '.join(board)}"
        case HandStarted():
            redeal = f" REDEAL {event.redeal}" if event.redeal else ""
            amounts = event.blinds or {}
            sb = f"SB seat {event.small_blind}" if event.small_blind else "SB dead"
            blinds = (f"{sb}{' ' + str(amounts['sb']) if amounts else ''}, BB seat "
                      f"{event.big_blind}{' ' + str(amounts['bb']) if amounts else ''}")
            dead = " (dead button)" if event.dead_button else ""
            return (f"{stamp}  === hand {event.hand}{redeal}: {event.game}, button seat "
                    f"{event.button}{dead}, {blinds}, level {event.level}, "
                    f"deck {event.deck or '(named by its first card)'} ===")
        case HandRecord(hand=hand, hole=hole, best=best, best_hand=best_hand):
            parts = []
            for seat_key, cards in hole.items():
                made = (best or {}).get(seat_key) or {}
                label = str(made.get("high_name") or "")
                low = made.get("low_name")
                label += f", {low}" if low else ""
                parts.append(f"seat {seat_key} {''.join(cards)}" + (f" {label}" if label else ""))
            winners = "".join(
                f"; best {side} seat {' and '.join(map(str, seats))}"
                for side, seats in (best_hand or {}).items())
            return f"{stamp}  hand {hand:>3}  record: " + "; ".join(parts) + winners
        case Level(level=level, sb=sb, bb=bb, ante=ante, note=note):
            return (f"{stamp}  LEVEL {level}: blinds {sb}/{bb}, ante {ante}"
                    + (f" - {note}" if note else ""))
    rest = {k: v for k, v in event.to_json().items() if k not in ("type", "t")}
    return f"{stamp}  {event.type} {json.dumps(rest)}"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tablectl", description="Poker table controller")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("replay", help="feed recorded inputs through the core, print events")
    p.add_argument("file", metavar="FILE", help="JSON lines of inputs, or - for stdin")
    p.add_argument("--profile", default=DEFAULT_PROFILE,
                   help=f"house-rule profile name or .toml path (default {DEFAULT_PROFILE})")
    p.add_argument("--deal-gap", type=float, default=3.0,
                   help="seconds after the last expected card still in the deal (default 3)")
    p.add_argument("--no-evaluate", action="store_true",
                   help="leave best hands out of hand records")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("profiles", help="list house-rule profiles and what differs")
    p.add_argument("--show", metavar="NAME", help="one profile's rules with their sources")
    p.add_argument("--file", metavar="PATH", help="also validate and compare this .toml profile")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_profiles)

    p = sub.add_parser("demo", help="replay a generated session and narrate it")
    p.add_argument("--profile", default=DEFAULT_PROFILE)
    p.add_argument("--hands", type=int, default=12)
    p.add_argument("--game", choices=("holdem", "omaha", "omaha8", "mixed"), default="holdem")
    p.add_argument("--irregularities", type=float, default=0.3,
                   help="share of hands with one irregularity (default 0.3)")
    p.add_argument("--structure", default="tda-2024", help="blind structure for the clock")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quiet", action="store_true", help="print the summary only")
    p.add_argument("--shoe", action="store_true",
                   help="deal through the simulated shoe (firmware code on a pty) in real time")
    p.add_argument("--pace", type=float, default=0.1,
                   help="with --shoe: seconds per second of the dealer's script (default 0.1)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("render", help="draw every display screen to PNG files")
    p.add_argument("screen", nargs="*", help="screen names (default: all)")
    p.add_argument("--all", action="store_true", help="every screen")
    p.add_argument("--out", default="screens",
                   help="output folder (default ./screens; ignored by git in the checkout)")
    p.add_argument("--scale", type=int, default=4, help="pixel scale of the PNGs (default 4)")
    p.add_argument("--golden", action="store_true",
                   help="native size 1-bit PNGs and LCD text, as the tests' golden files")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("run", help="the table daemon")
    p.add_argument("--config", required=True, help="the table's TOML configuration")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("doctor", help="check each part of the table and say what to do")
    p.add_argument("--config", default="/etc/tablectl/table.toml")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "sim", help="simulated tables: the real daemon, simulated hardware",
        description="Simulated tables, each the real daemon (tablectl run) in its own process "
                    "with the simulated shoe on a pty and a mock button a scripted dealer "
                    "presses; events go to a private Mosquitto and the recorder (or each "
                    "table's outbox without a broker). Ends after the hands, or on Ctrl-C.")
    p.add_argument("--tables", type=int, default=2, help="how many tables (default 2)")
    p.add_argument("--hands", type=int, default=8, help="hands each table deals (default 8)")
    p.add_argument("--profile", default=DEFAULT_PROFILE,
                   help=f"house-rule profile, a name or a .toml path (default {DEFAULT_PROFILE})")
    p.add_argument("--structure", default="tda-2024",
                   help="blind structure of the tables' clocks (default tda-2024)")
    p.add_argument("--pace", type=float, default=0.1,
                   help="seconds per second of the dealer's script (default 0.1: 10x)")
    p.add_argument("--irregularities", type=float, default=0.25,
                   help="share of hands with one irregularity, 0 to 1 (default 0.25)")
    p.add_argument("--seed", type=int, default=1,
                   help="the dealers' random seed: the same seed deals the same (default 1)")
    p.add_argument("--no-broker", action="store_true",
                   help="no Mosquitto: each table keeps its events in its local outbox")
    p.add_argument("--dir", help="keep the tables' files (configurations, databases, logs) "
                                 "here (default: a temporary folder, removed at the end)")
    p.add_argument("--quiet", action="store_true",
                   help="print the summary only, not the tables' displays and buzzers")
    p.add_argument("--dashboard", metavar="HOST:PORT",
                   help="run the venue hub with its floor dashboard here (a demo login is "
                        "printed) instead of the bare recorder; it stays up after the hands")
    p.add_argument("--featured", metavar="TABLE",
                   help="with --dashboard: feature this table (t1, t2...) on the broadcast "
                        "feed from its first hand, and print its overlay link for OBS Studio "
                        "and a broadcast login")
    p.add_argument("--delay", type=int, default=30,
                   help="with --featured: the feed's security delay in seconds (default 30)")
    p.set_defaults(func=cmd_sim)

    p = sub.add_parser("recorder", help="run the hub's recorder (stores and acknowledges)")
    _mqtt_options(p)
    p.add_argument("--db", help="SQLite file or postgresql:// URL (storage.db; default hub.db)")
    p.add_argument("--client-id", default="recorder",
                   help="its session at the broker (default recorder)")
    p.set_defaults(func=cmd_recorder)

    p = sub.add_parser("venue-clock", help="the hub's venue clock, which the tables follow")
    _mqtt_options(p)
    p.add_argument("--start", metavar="STRUCTURE", help="start this structure at once "
                   "(clock.start)")
    p.set_defaults(func=cmd_venue_clock)

    p = sub.add_parser("clock", help="control the venue clock: start STRUCTURE, pause, resume, "
                                     "add SECONDS, level N, break start|end, stop, "
                                     "hand-for-hand on|off")
    p.add_argument("action", choices=("start", "pause", "resume", "add", "level", "break",
                                      "stop", "hand-for-hand"))
    p.add_argument("value", nargs="?")
    _mqtt_options(p)
    p.set_defaults(func=cmd_clock)

    p = sub.add_parser("hub", help="the venue hub: recorder, venue clock, floor dashboard")
    _mqtt_options(p)
    p.add_argument("--db", help="SQLite file or postgresql:// URL (storage.db; default hub.db)")
    p.add_argument("--users", help="staff users file, made with `tablectl hub-user` "
                                   "(dashboard.users; default users.toml)")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="where the dashboard listens (dashboard.listen; default "
                        "127.0.0.1:8080)")
    p.add_argument("--web-cert", help="HTTPS certificate for the dashboard (dashboard.cert)")
    p.add_argument("--web-key", help="its key (dashboard.key)")
    p.add_argument("--recorder-cert", help="the recorder's client certificate, CN recorder "
                                           "(mqtt.recorder_cert)")
    p.add_argument("--recorder-key", help="its key (mqtt.recorder_key)")
    p.add_argument("--retention-days", type=float,
                   help="delete events, acknowledged alerts and log lines older than this "
                        "(storage.retention_days; 0 keeps everything; default 90)")
    p.add_argument("--start", metavar="STRUCTURE", help="start the venue clock at once, "
                   "unless the database keeps one: a restart resumes it (clock.start)")
    p.add_argument("--structures", metavar="DIR",
                   help="the house's own blind structures (NAME.toml), named beside the "
                        "built-in ones (floor.structures)")
    p.add_argument("--profile", metavar="NAME|FILE",
                   help="the house's rules the floor balances and breaks tables by (a "
                        f"profile as in `tablectl profiles`; floor.profile; default "
                        f"{DEFAULT_PROFILE})")
    p.add_argument("--short-table", action="append", metavar="TABLE=SEATS",
                   help="a table that seats fewer than the house's table size (a 6-max "
                        "table: t7=6); balancing and breaking count its seats; repeat for "
                        "each (floor.short_tables)")
    p.add_argument("--locale", metavar="TAG",
                   help="the venue's language for dates and times on the dashboard, as "
                        "BCP 47 (dashboard.locale: en-GB, fr-FR; default: each browser's own)")
    p.add_argument("--time-zone", metavar="ZONE",
                   help="the venue's time zone for the dashboard's times (dashboard.time_zone, "
                        "IANA: Europe/London; default: each browser's own)")
    p.add_argument("--check", action="store_true",
                   help="read the configuration and the files it names, say what would run, "
                        "and exit (0: it would start) without connecting or listening")
    p.set_defaults(func=cmd_hub)

    p = sub.add_parser("uplink", help="send what the venue's hub recorded to the group's "
                                      "cluster (several venues, one central recorder)")
    _config_option(p)
    p.add_argument("--venue", help="the venue id (venue.id)")
    p.add_argument("--db", help="the venue hub's database: SQLite file or postgresql:// URL "
                                "(storage.db; default hub.db)")
    p.add_argument("--state", help="the uplink's own SQLite file: what the centre holds, "
                                   "table by table (uplink.state; default uplink.db)")
    _cluster_options(p, None)
    p.set_defaults(func=cmd_uplink)

    p = sub.add_parser("central", help="the group's central recorder: every venue's events "
                                       "from the cluster into one database")
    _config_option(p)
    p.add_argument("--db", help="postgresql:// URL, or a SQLite file (central.db)")
    p.add_argument("--client-id", help="its connection's name at the cluster "
                                       "(central.client_id; default central-recorder)")
    _cluster_options(p, "central")
    p.set_defaults(func=cmd_central)

    p = sub.add_parser("hub-user", help="add or change a staff member of the dashboard")
    p.add_argument("name")
    p.add_argument("--role", choices=("viewer", "floor", "supervisor", "broadcast"),
                   required=True)
    p.add_argument("--users", default="users.toml", help="the users file (default users.toml)")
    p.add_argument("--password-stdin", action="store_true",
                   help="read the password from standard input (for scripts)")
    p.set_defaults(func=cmd_hub_user)

    p = sub.add_parser("bench", help="benchmarks: " + ", ".join(BENCHES))
    p.add_argument("which", choices=(*BENCHES, *LAB_BENCHES))
    p.add_argument("rest", nargs=argparse.REMAINDER, help="the benchmark's own options")
    p.set_defaults(func=cmd_bench)

    from tablectl.deck_commands import add_parsers

    add_parsers(sub)
    return parser


# The optional libraries a command may need, and the extra that installs each (pyproject.toml).
EXTRA_OF_MODULE = {
    "PIL": "hardware", "luma": "hardware", "serial": "hardware", "gpiozero": "hardware",
    "nfc": "hardware", "paho": "hardware", "jsonschema_rs": "hardware",
    "psycopg": "hub", "fastapi": "hub", "uvicorn": "hub",
}


def main(argv: Sequence[str] | None = None) -> int:
    from controller.datafiles import ProblemsError
    from tablectl.deck_commands import DeckCommandError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (DeckCommandError, ProblemsError) as exc:  # a bad file or flag: the user's to mend
        return _fail(str(exc))
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:
        # An optional library this command needs is not installed: say which extra has it.
        top = (exc.name or "").split(".")[0]
        if top not in EXTRA_OF_MODULE:
            raise
        extra = EXTRA_OF_MODULE[top]
        return _fail(f"'tablectl {args.command}' needs {top}, which is not installed: install "
                     f"the '{extra}' extra (pip install 'poker-table-controller[{extra}]', or "
                     f"from a checkout: pip install -e '.[{extra}]')")


if __name__ == "__main__":
    sys.exit(main())
