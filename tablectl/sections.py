"""Configuration files declared once: a file is a tree of sections, each section a frozen
dataclass whose fields are its keys, with their types, defaults and, in words, what a value
must be (``setting``). The file's JSON Schema is derived from those declarations; jsonschema-rs
checks a file's data against it, every problem at once, each named by its key (and by the
flag that gave the value, when one did); then the sections are built, and the file's own rules
between keys (``problems`` on the root section) are checked with every good value in place.

Why jsonschema-rs: every table and every hub installs it already (the contract's validators,
contract/schema.py: the ``hardware`` and ``hub`` extras), and it reports every error with its
path. pydantic would read the same declarations, but only the hub has it (through FastAPI) and a
Pi's install stays light without it. One mechanism for the table's file (tablectl/config.py)
and the hub's (tablectl/hub_config.py).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

from contract.schema import NAME
from controller.datafiles import ProblemsError, parse_toml
from tablectl.secret_files import loose_secret

T = TypeVar("T")

# Keys both files have. A venue and a table id are MQTT topic levels: one rule
# (contract/schema.py).
IDENTIFIER: dict[str, Any] = {"expect": "1 to 32 letters, digits, '-' or '_'",
                              "pattern": NAME.pattern}
PORT: dict[str, Any] = {"expect": "a TCP port number", "minimum": 1, "maximum": 65535}


def setting(default: Any, *, expect: str | None = None,
            secret: bool | Callable[[Any], bool] = False, **schema: Any) -> Any:
    """A section's key: its default (None: not set unless given), what a value must be in
    words (a problem then says so, with the value given), whether its value is a secret (a
    problem never shows it: the journal and a terminal are read by others; a file that holds
    one is refused when others may read it) or, a function, which of its values hold one (a
    database URL with a password), and JSON Schema keywords that constrain it beyond its type
    (``minimum``, ``pattern``, ``enum``...)."""
    metadata = {"expect": expect, "schema": schema, "secret": secret}
    if isinstance(default, list | dict | set):
        return dataclasses.field(default_factory=lambda: copy.deepcopy(default),
                                 metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def section(cls: type[T]) -> Any:
    """A section within a section, its keys at their defaults unless given."""
    return dataclasses.field(default_factory=cls)


# ------------------------------------------------------------------ the schema
def _fields(cls: type) -> list[tuple[dataclasses.Field[Any], Any]]:
    hints = get_type_hints(cls)
    return [(f, hints[f.name]) for f in dataclasses.fields(cls)]


def _optional(hint: Any) -> Any:
    """``X | None`` as ``X`` (a key not given is None: TOML has no null)."""
    if get_origin(hint) in (types.UnionType, typing.Union):
        (inner,) = [arg for arg in get_args(hint) if arg is not type(None)]
        return inner
    return hint


_SCALARS = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _type_schema(hint: Any) -> dict[str, Any]:
    hint = _optional(hint)
    if dataclasses.is_dataclass(hint):
        return schema_of(typing.cast(type, hint))
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (tuple, list):
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "items": _type_schema(args[0]), "minItems": len(args),
                    "maxItems": len(args)}
        return {"type": "array", "items": _type_schema(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(args[1])}
    raise TypeError(f"no schema for {hint!r}")


@cache
def schema_of(cls: type) -> dict[str, Any]:
    """The JSON Schema of a section: its keys and nothing else."""
    properties = {f.name: {**_type_schema(hint), **f.metadata.get("schema", {})}
                  for f, hint in _fields(cls)}
    return {"type": "object", "properties": properties, "additionalProperties": False}


@cache
def _validator(cls: type) -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(schema_of(cls))


# ------------------------------------------------------------------ the problems
_JSON_TYPES = {"string": "a string", "integer": "an integer", "number": "a number",
               "boolean": "true or false", "array": "an array", "object": "a table"}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    for python, words in ((str, "a string"), (int, "an integer"), (float, "a float"),
                          (list, "an array"), (dict, "a table")):
        if isinstance(value, python):
            return words
    return f"a {type(value).__name__}"  # a TOML date or time


def _field_at(cls: type, path: list[str | int]) -> tuple[int, str | None] | None:
    """The key a value at ``path`` belongs to: how many steps down it is, and what its value
    must be in words (None when the schema's own words will do); None for a section."""
    current: Any = cls
    for depth, step in enumerate(path):
        if not isinstance(current, type) or not dataclasses.is_dataclass(current):
            return None
        found = {f.name: (f, hint) for f, hint in _fields(current)}.get(str(step))
        if found is None:
            return None
        field, hint = found
        inner = _optional(hint)
        if not dataclasses.is_dataclass(inner):
            return depth + 1, field.metadata.get("expect")
        current = inner
    return None


Secret = bool | Callable[[Any], bool]  # how a key is declared secret (``setting``)


def _secret_keys(cls: type, prefix: str = "") -> dict[str, Secret]:
    """Each dotted key of ``cls`` declared secret, with how: True (its every value is one) or
    the function telling which of its values hold one."""
    found: dict[str, Secret] = {}
    for field, hint in _fields(cls):
        inner = _optional(hint)
        if dataclasses.is_dataclass(inner):
            found.update(_secret_keys(typing.cast(type, inner), f"{prefix}{field.name}."))
        elif field.metadata.get("secret"):
            found[prefix + field.name] = field.metadata["secret"]
    return found


def _holds_secret(secret: Secret, value: Any) -> bool:
    """Whether ``value``, given for a key declared ``secret``, holds one: any value of a key
    declared True; of one declared by a function, a value it picks out, or one within a list
    or table (a wrong list can hold a URL with a password)."""
    if value is None or secret is False:
        return False
    if secret is True:
        return True
    if isinstance(value, Mapping):
        return any(_holds_secret(secret, item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_secret(secret, item) for item in value)
    return bool(secret(value))


def _given(data: Any, key: str) -> Any:
    """The value ``data`` gives the dotted ``key`` (None: not given)."""
    for step in key.split("."):
        data = data.get(step) if isinstance(data, Mapping) else None
    return data


def held_secrets(cls: type, data: Any) -> list[str]:
    """The dotted keys of ``cls`` whose values in ``data`` hold a secret."""
    return [key for key, secret in _secret_keys(cls).items()
            if _holds_secret(secret, _given(data, key))]


def _schema_at(schema: dict[str, Any], path: list[str | int]) -> dict[str, Any]:
    for step in path:
        properties = schema.get("properties", {})
        if step in properties:
            schema = properties[step]
        elif isinstance(schema.get("additionalProperties"), dict):
            schema = schema["additionalProperties"]
        elif "items" in schema:
            schema = schema["items"]
    return schema


def _dotted(path: list[str | int]) -> str:
    return ".".join(str(step) for step in path)


def _unsupported(data: Any, path: list[str | int], found: list[tuple[list[str | int], Any]]) -> Any:
    """``data`` without what no schema can hold (NaN, infinities, TOML dates and times), each
    noted in ``found`` with its path."""
    if isinstance(data, dict):
        kept = {}
        for name, value in data.items():
            checked = _unsupported(value, [*path, name], found)
            if checked is not _DROPPED:
                kept[name] = checked
        return kept
    if isinstance(data, list):
        items = [_unsupported(value, [*path, i], found) for i, value in enumerate(data)]
        return _DROPPED if any(item is _DROPPED for item in items) else items
    if isinstance(data, str | int | bool) or (isinstance(data, float) and math.isfinite(data)):
        return data
    found.append((path, data))
    return _DROPPED


_DROPPED = object()


class _Report:
    """The problems, one for each key a value is wrong for, in the order found."""

    def __init__(self, flags: Mapping[str, tuple[str, Any]], secrets: Mapping[str, Secret],
                 data: Mapping[str, Any]) -> None:
        self.flags = flags  # dotted key -> the flag that gave its value, and as it was given
        self.secrets = secrets  # dotted keys declared secret (``_secret_keys``)
        self.data = data  # as given: a value that holds a secret is never shown
        self.lines: list[str] = []
        self.keys: set[str] = set()  # the keys said wrong already
        self.bad: list[list[str | int]] = []  # what to leave out before building

    def add(self, path: list[str | int], text: str, *,
            drop: list[str | int] | None = None) -> None:
        where = _dotted(path)
        if where not in self.keys:
            self.keys.add(where)
            self.line(where, text)
        self.bad.append(path if drop is None else drop)

    def line(self, where: str, text: str) -> None:
        """A problem with the key ``where``, said without its value if that holds a secret."""
        secret = self.secrets.get(where)
        if secret is not None and _holds_secret(secret, _given(self.data, where)):
            text = "wrong: it must be a string (the value given is not shown: a secret)"
        flag = self.flags.get(where)
        self.lines.append(f"{flag[0]} ({where}): {text}" if flag else f"{where}: {text}")

    def shown(self, path: list[str | int], value: Any) -> Any:
        """A value as its author wrote it: a flag's as given on the command line."""
        flag = self.flags.get(_dotted(path))
        return flag[1] if flag else value


def _describe(cls: type, data: Any, error: Any, report: _Report) -> None:
    path = list(error.instance_path)
    kind = type(error.kind).__name__
    schema = schema_of(cls)
    if kind == "AdditionalProperties":
        known = ", ".join(_schema_at(schema, path).get("properties", {}))
        for name in error.kind.unexpected:
            what = "key" if path else "section"
            report.add([*path, name], f"unknown {what} (known: {known})")
        return
    owner = _field_at(cls, path)
    if owner is None:  # a section that is not a table
        report.add(path, "must be a table")
        return
    depth, expect = owner
    if expect is not None:
        field_path = path[:depth]
        value: Any = data
        for step in field_path:
            value = value[step]
        report.add(field_path, f"must be {expect}, not {report.shown(field_path, value)!r}")
        return
    # Left out before building: the key, or the entry of a table of named values (the
    # table's other entries kept), never one item of a list.
    drop = path if all(isinstance(step, str) for step in path) else path[:depth]
    if kind == "Enum":
        options = ", ".join(str(option) for option in error.kind.options)
        report.add(path, f"{error.instance!r} is not one of {options}", drop=drop)
    elif kind == "Type":
        wanted = " or ".join(_JSON_TYPES.get(t, t) for t in error.kind.types)
        report.add(path, f"must be {wanted}, not {_kind_of(error.instance)} "
                         f"({error.instance!r})", drop=drop)
    else:
        report.add(path, error.message, drop=drop)


def _without(data: dict[str, Any], path: list[str | int]) -> None:
    *parents, last = path
    for step in parents:
        data = data.get(str(step)) if isinstance(data, dict) else None  # type: ignore[assignment]
        if not isinstance(data, dict):
            return
    if isinstance(data, dict):
        data.pop(str(last), None)


def read(path: str, error: type[ProblemsError]) -> dict[str, Any]:
    """A configuration file's TOML, or ``error`` saying why it cannot be read or parsed (the
    core's loaders are not imported: the group's services start without them)."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as exc:
        raise error(path, [f"cannot read: {exc.strerror}"]) from None
    return parse_toml(text, error, path)


# ------------------------------------------------------------------ the values
def _value(hint: Any, value: Any, default: Any) -> Any:
    hint = _optional(hint)
    if dataclasses.is_dataclass(hint):
        return build(typing.cast(type, hint), value)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (tuple, list):
        return tuple(_value(args[0], item, None) for item in value)
    if origin is dict:
        return {**(default or {}), **value}  # the keys not given keep their defaults
    if hint is int:
        return int(value)  # (an integral float passes the schema's "integer")
    if hint is float:
        return float(value)
    return value


def build(cls: type[T], data: Mapping[str, Any]) -> T:
    """The section from checked data: each key given, the others at their defaults."""
    values = {}
    for field, hint in _fields(cls):
        if field.name in data:
            default = (field.default_factory() if field.default_factory
                       is not dataclasses.MISSING else field.default)
            values[field.name] = _value(hint, data[field.name], default)
    return cls(**values)


def load(cls: type[T], data: Mapping[str, Any], origin: str, error: type[ProblemsError], *,
         flags: Mapping[str, tuple[str, Any]] | None = None,
         required: Mapping[str, str] | None = None, source: str | None = None) -> T:
    """The file's sections from its data, or ``error`` listing every problem with its key.
    ``flags``: the keys whose values came from the command line, each with its flag and the
    value as given; ``required``: the keys the caller cannot do without, and how to give each
    (one whose value is wrong is said wrong, not missing); ``source``: the file the data was
    read from, refused if it holds a secret that users other than its owner may read."""
    report = _Report(flags or {}, _secret_keys(cls), data)
    if source is not None:
        for key in held_secrets(cls, data):
            loose = None if key in report.flags else loose_secret(source, "a secret")
            if loose is not None:  # (the file's fault, not the value's: said as it is)
                report.lines.append(f"{key}: {loose}")
    root: type = cls
    found: list[tuple[list[str | int], Any]] = []
    clean = _unsupported(dict(data), [], found)
    for path, value in found:
        owner = _field_at(cls, path)
        wanted = _schema_at(schema_of(root), path).get("type")
        if owner is not None and owner[1] is not None:
            whole: Any = data
            for step in path[:owner[0]]:
                whole = whole[step]
            text = f"must be {owner[1]}, not {whole!r}"
        elif wanted in ("number", "integer"):
            text = f"must be a finite number, not {value!r}"
        else:
            words = _JSON_TYPES.get(str(wanted), "a table")
            text = f"must be {words}, not {_kind_of(value)} ({value})"
        report.add(path if owner is None else path[:owner[0]], text)
    for problem in _validator(root).iter_errors(clean):
        _describe(cls, clean, problem, report)
    for path in report.bad:  # the rules between keys see every good value, and defaults
        _without(clean, path)
    result = build(cls, clean)
    for where, how in (required or {}).items():
        found_value: Any = result
        for step in where.split("."):
            found_value = getattr(found_value, step)
        if found_value in (None, ()) and where not in report.keys:
            report.line(where, f"not set: {how}")
    rules = getattr(result, "problems", None)
    # A rule between keys sees the defaults in place of the values refused above: it is
    # told which, and leaves alone what it would judge by a default (a false problem).
    for line in rules(frozenset(report.keys)) if rules is not None else []:
        where, _, text = line.partition(": ")
        report.line(where, text)
    if report.lines:
        raise error(origin, report.lines)
    return result


def defaults(cls: type) -> dict[str, Any]:
    """Every key of the file with its default, by section (None: not set by default)."""
    result: dict[str, Any] = {}
    for field, hint in _fields(cls):
        inner = _optional(hint)
        if dataclasses.is_dataclass(inner):
            result[field.name] = defaults(typing.cast(type, inner))
        elif field.default_factory is not dataclasses.MISSING:
            result[field.name] = field.default_factory()
        else:
            result[field.name] = field.default
    return result
