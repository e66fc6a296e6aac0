"""``tablectl deck enroll`` and ``tablectl deck check``: from a recorded stream of reads, or
live from the shoe (``--port``, the simulated shoe's pty included)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the core is imported where a command uses it (tablectl.cli says why)
    from controller.decks import DeckRegistry


class DeckCommandError(Exception):
    """The user's mistake: printed as one line, exit 2."""


def load_registry(path: Path) -> DeckRegistry:
    from controller.decks import DeckRegistry, RegistryError, registry_from_data

    if not path.exists():
        return DeckRegistry()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DeckCommandError(f"cannot read the deck registry {path}: {exc}") from None
    try:
        return registry_from_data(data, str(path))
    except RegistryError as exc:
        raise DeckCommandError(str(exc)) from None


def save_registry(registry: DeckRegistry, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(registry.to_data(), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


Read = tuple[str | None, str | None, int | None]  # uid, NDEF text, milliseconds


def reads_from_file(name: str, deck: str | None = None) -> Iterator[Read]:
    """Card reads from a file of JSON lines: the shoe's reads (``tag``, ``ndef``) or the replay
    format (``{"type": "card", "card": "As"}``), whose cards are of ``deck`` unless a line
    names its own; other lines (deck in and out, buttons) are skipped."""
    stream = sys.stdin if name == "-" else None
    try:
        handle = stream or open(name, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise DeckCommandError(f"cannot read {name}: {exc.strerror}") from None
    try:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DeckCommandError(f"{name}: line {number}: not JSON ({exc.msg})") from None
            if not isinstance(obj, dict) or obj.get("type") != "card":
                continue  # deck in/out, buttons: not reads
            t = obj.get("t")
            ms = int(t * 1000) if isinstance(t, int | float) else None
            text = obj.get("ndef")
            if text is None and isinstance(obj.get("card"), str):
                text = f"{obj.get('deck') or deck or ''}:{obj['card']}"
            yield obj.get("tag"), text, ms
    finally:
        if handle is not sys.stdin:
            handle.close()


def reads_from_shoe(url: str, idle: float, quiet: bool) -> Iterator[Read]:
    """Live reads from the shoe in deck-check mode until ``idle`` seconds pass with none."""
    import queue
    import time

    from firmware_bridge import messages as m
    from firmware_bridge.host import LinkDown, LinkUp
    from hardware.shoe_serial import SerialShoe

    events: queue.Queue[Any] = queue.Queue()
    shoe = SerialShoe(url, lambda e, t: events.put(e)).start()
    shoe.set_mode(m.MODE_DECK_CHECK)
    last = time.monotonic()
    seen_card = False
    try:
        while True:
            try:
                event = events.get(timeout=0.1)
            except queue.Empty:
                if time.monotonic() - last > idle and (seen_card or time.monotonic() - last
                                                       > idle * 10):
                    return
                continue
            if isinstance(event, m.CardDrawn):
                seen_card = True
                last = time.monotonic()
                yield event.uid_hex, event.text, event.ms
            elif isinstance(event, m.DeckRemoved) and seen_card:
                return
            elif isinstance(event, LinkUp | LinkDown) and not quiet:
                print(f"shoe link: {type(event).__name__}", file=sys.stderr)
    finally:
        shoe.set_mode(m.MODE_DEALING)
        time.sleep(0.1)
        shoe.stop()


def _reads(args: argparse.Namespace) -> Iterator[Read]:
    if args.port:
        return reads_from_shoe(args.port, args.idle, args.json)
    if not args.file:
        raise DeckCommandError("give a FILE of recorded reads (or -), or --port for the shoe")
    return reads_from_file(args.file, args.deck)


def cmd_enroll(args: argparse.Namespace) -> int:
    from controller.decks import Enrollment, EnrollmentError

    registry_path = Path(args.registry)
    registry = load_registry(registry_path)
    enrollment = Enrollment(args.deck, registry, jokers=args.jokers)
    try:
        for uid, _text, ms in _reads(args):
            if uid is None:
                raise DeckCommandError("a read without a tag UID cannot be enrolled")
            card = enrollment.read(uid, ms)
            if card is not None and not args.json:
                nxt = enrollment.expected
                print(f"{uid} -> {args.deck}:{card}" + (f"   next: {nxt}" if nxt else ""))
            if enrollment.complete:
                break
        registry = enrollment.apply()
        if back := args.back:
            registry.decks[args.deck] = back
    except EnrollmentError as exc:
        raise DeckCommandError(f"enrollment of {args.deck} stopped: {exc}") from None
    save_registry(registry, registry_path)
    if args.json:
        print(json.dumps({"deck": args.deck, "enrolled": len(enrollment.enrolled),
                          "registry": str(registry_path)}))
    else:
        print(f"deck {args.deck}: {len(enrollment.enrolled)} tags enrolled in {registry_path}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from controller.decks import DeckCheck

    registry = load_registry(Path(args.registry))
    check = DeckCheck(args.deck, registry)
    for uid, text, ms in _reads(args):
        check.read(uid, text, ms)
    result = check.result()
    if args.json:
        print(json.dumps(result.report()))
    else:
        print(result.text())
    return 0 if result.ok else 1


def add_parsers(sub: Any) -> None:
    deck = sub.add_parser("deck", help="enroll tags and check decks")
    deck_sub = deck.add_subparsers(dest="deck_command", required=True,
                                   parser_class=type(deck))
    for name, func, help_text in (
        ("enroll", cmd_enroll, "enroll a deck's tag UIDs, cards run through in order "
                               "(spades, hearts, diamonds, clubs; ace to king)"),
        ("check", cmd_check, "name every missing, duplicated, foreign or unknown card"),
    ):
        p = deck_sub.add_parser(name, help=help_text)
        p.add_argument("file", nargs="?", metavar="FILE",
                       help="recorded reads (JSON lines of card inputs), or - for stdin")
        p.add_argument("--deck", required=True, help="the deck's id, e.g. R1")
        p.add_argument("--registry", default="decks.json",
                       help="the table's deck registry (default decks.json)")
        p.add_argument("--port", help="read live from the shoe at this serial port or URL")
        p.add_argument("--idle", type=float, default=3.0,
                       help="with --port: finish after this many seconds without a card")
        p.add_argument("--json", action="store_true")
        if name == "enroll":
            p.add_argument("--jokers", type=int, default=0, help="jokers enrolled after the 52")
            p.add_argument("--back", help="the deck's back colour, e.g. red")
        p.set_defaults(func=func)
