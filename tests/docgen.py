"""The documentation's tables that restate the code, written from the code, never by hand.

    python -m tests.docgen            # compare the committed docs with what the code says;
                                      # exit 1 naming each table that differs
    python -m tests.docgen --write    # write those tables again

A generated table sits in a Markdown file between two comments that name it::

    <!-- generated: events (python -m tests.docgen --write) -->
    ...
    <!-- end of generated: events -->

Each name has its writer below: ``events`` (the core's events, from ``controller/events.py``,
with the values the AsyncAPI document closes), ``topics`` (the MQTT channels, from
``contract/asyncapi.json``), ``alerts`` (the floor's alert kinds, from ``hub/floor.py``) and
``hub_flags`` (each flag of ``tablectl hub`` and its key in hub.toml, from
``tablectl/hub_config.py``) and ``benchmarks`` (each benchmark command, from ``tablectl/cli.py``
and its module's docstring).
``tests/test_readme.py`` runs the comparison in ``make test``. The prose around a table is the
author's; only what is between the comments is rewritten.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ASYNCAPI = ROOT / "contract" / "asyncapi.json"
REGION = re.compile(r"(<!-- generated: (?P<name>[a-z_]+) \(python -m tests\.docgen --write\) -->\n)"
                    r"(?P<body>.*?)"
                    r"(<!-- end of generated: (?P=name) -->)", re.S)


def _asyncapi() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ASYNCAPI.read_text())
    return data


def _data_schemas(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``data`` schema the envelope applies to each event type (``type`` -> schema)."""
    schemas = spec["components"]["schemas"]
    found = {}
    for rule in schemas["Envelope"].get("allOf", []):
        kind = rule.get("if", {}).get("properties", {}).get("type", {}).get("const")
        ref = rule.get("then", {}).get("properties", {}).get("data", {}).get("$ref", "")
        if kind and ref.startswith("#/components/schemas/"):
            found[kind] = schemas[ref.rsplit("/", 1)[1]]
    return found


def _closed_values(schema: dict[str, Any]) -> list[str]:
    """``field``: its values, for each top-level field the schema lists the values of."""
    return [f"`{name}`: {', '.join(str(v) for v in prop['enum'])}"
            for name, prop in schema.get("properties", {}).items() if "enum" in prop]


def _variant_of(cls: type) -> str:
    """What tells a class apart from the others of its type: an irregularity's kind, the
    actions and reasons a ruling class is for (empty for a type of one class)."""
    kind = getattr(cls, "KIND", None)
    if kind is not None:
        return f" (`kind` `{kind}`: {cls.__name__})"
    rules_on = getattr(cls, "RULES_ON", ())
    if rules_on:
        said = ", ".join(f"`{action}`" + (f" for `{reason}`" if reason else "")
                         for action, reason in rules_on)
        return f" ({said}: {cls.__name__})"
    if cls.__name__ == "Ruling":
        return " (any other action)"
    return ""


def events_table() -> str:
    """One row per event class of the core, its JSON keys in the order ``to_json`` writes them
    (``controller.events._layout`` is that order: field order, keywords renamed)."""
    from controller.events import EVENT_CLASSES, _layout

    schemas = _data_schemas(_asyncapi())
    rows = ["| type | always written | written when set | values the contract closes |",
            "|---|---|---|---|"]
    for cls in EVENT_CLASSES:
        layout = _layout(cls)
        always = [key for _, key, omit_none, *_ in layout if not omit_none]
        when_set = [key for _, key, omit_none, *_ in layout if omit_none]
        kind = f"`{cls.TYPE}`" + _variant_of(cls)
        state = next((f.default for f in dataclasses.fields(cls)
                      if f.name == "state" and isinstance(f.default, str)), None)
        if state is not None:  # two classes share the type; their state tells them apart
            kind += f" (`state` `{state}`)"
            always.remove("state")
        values = _closed_values(schemas[cls.TYPE]) if cls.TYPE in schemas else []
        written = {key for _, key, *_ in layout}
        if getattr(cls, "KIND", None) is not None:  # the row names its one kind already
            written.discard("kind")
        values = [v for v in values if v.split("`")[1] in written]
        rows.append("| " + " | ".join([kind, ", ".join(f"`{k}`" for k in always),
                                       ", ".join(f"`{k}`" for k in when_set),
                                       "; ".join(values)]) + " |")
    return "\n".join(rows) + "\n"


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=\.)\s", text.strip(), maxsplit=1)[0].replace("|", "\\|")


def topics_table() -> str:
    """One row per channel of the AsyncAPI document: its address, its messages, what it is."""
    rows = ["| channel | topic | messages | what (its description's first sentence) |",
            "|---|---|---|---|"]
    for name, channel in _asyncapi()["channels"].items():
        messages = ", ".join(f"`{m}`" for m in channel.get("messages", {}))
        rows.append(f"| {name} | `{channel['address']}` | {messages} | "
                    f"{_first_sentence(channel.get('description', ''))} |")
    return "\n".join(rows) + "\n"


def alerts_table() -> str:
    """One row per alert kind of the floor view: its label and severity."""
    from hub.alerts import ALERT_KINDS

    rows = ["| kind | shown as | severity |", "|---|---|---|"]
    rows += [f"| `{kind}` | {label} | {severity} |"
             for kind, (label, severity) in ALERT_KINDS.items()]
    return "\n".join(rows) + "\n"


def hub_flags_table() -> str:
    """One row per flag of ``tablectl hub``: the hub.toml key it sets, and the key's default
    (what an upgrade from the flags writes: docs/hub.md, "Upgrading")."""
    from tablectl.hub_config import FLAGS, REQUIRED, HubConfig

    defaults = HubConfig()
    rows = ["| flag | hub.toml key | default |", "|---|---|---|"]
    for dest, flag in FLAGS["hub"].items():
        where, _, name = flag.key.partition(".")
        value = getattr(getattr(defaults, where), name)
        default = ("required" if flag.key in REQUIRED["hub"] else
                   "none" if value in (None, {}) else
                   f"`{json.dumps(value)}`")
        rows.append(f"| `--{dest.replace('_', '-')}` | `{flag.key}` | {default} |")
    return "\n".join(rows) + "\n"


def _module_sentence(path: Path) -> str:
    """The first sentence of a module's docstring, read without importing it, as Markdown."""
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return _first_sentence(" ".join(doc.split()).replace("``", "`"))


def benchmarks_table() -> str:
    """One row per benchmark command: those installed (``tablectl bench NAME``, the names
    ``tablectl/cli.py`` gives them), then every module of ``tests/bench`` (the lab's: ``python
    -m tests.bench.NAME``); what each measures is its module's docstring's first sentence."""
    from tablectl.cli import BENCHES

    rows = ["| command | module | what it measures (its docstring's first sentence) |",
            "|---|---|---|"]
    for name, module in BENCHES.items():
        path = ROOT / "tablectl" / "bench" / f"{module}.py"
        rows.append(f"| `tablectl bench {name}` | `tablectl/bench/{module}.py` | "
                    f"{_module_sentence(path)} |")
    for path in sorted((ROOT / "tests" / "bench").glob("[!_]*.py")):
        rows.append(f"| `python -m tests.bench.{path.stem}` | `tests/bench/{path.name}` | "
                    f"{_module_sentence(path)} |")
    return "\n".join(rows) + "\n"


WRITERS: dict[str, Callable[[], str]] = {"events": events_table, "topics": topics_table,
                                         "alerts": alerts_table, "hub_flags": hub_flags_table,
                                         "benchmarks": benchmarks_table}


def documents() -> Iterator[Path]:
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))


def regenerate(text: str) -> tuple[str, list[str]]:
    """The text with every generated table written again, and the names of those it holds."""
    names: list[str] = []

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in WRITERS:
            raise SystemExit(f"no writer for the generated table {name!r} "
                             f"(tests/docgen.py knows {', '.join(WRITERS)})")
        names.append(name)
        return match[1] + WRITERS[name]() + match[4]

    return REGION.sub(fill, text), names


def stale() -> list[str]:
    """``path: name`` of every generated table whose committed text differs from the code's."""
    out = []
    for path in documents():
        text = path.read_text()
        new, names = regenerate(text)
        if new != text:
            old_bodies = {m["name"]: m["body"] for m in REGION.finditer(text)}
            new_bodies = {m["name"]: m["body"] for m in REGION.finditer(new)}
            out += [f"{path.relative_to(ROOT)}: {name}" for name in names
                    if old_bodies.get(name) != new_bodies.get(name)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.docgen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true",
                        help="write the generated tables again (else only compare)")
    args = parser.parse_args(argv)
    if args.write:
        for path in documents():
            text = path.read_text()
            new, _ = regenerate(text)
            if new != text:
                path.write_text(new)
                print(f"wrote {path.relative_to(ROOT)}")
        return 0
    differ = stale()
    for where in differ:
        print(f"{where}: differs from the code (python -m tests.docgen --write)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
