"""Reading the houses' data for the pure core, which reads no file itself: the built-in profiles,
structures and payout tables shipped in this package, a house's own profile or payout table (a
``.toml`` path) and its own structures (the directory the configuration names: the hub's
``--structures``, a table's ``clock.structures``), and any TOML file with every problem listed
at once.

A structure is asked for by name only (``check_structure_name``: no path from a command or an
input reaches the filesystem), read only if the opened file is a regular one (not a FIFO, a
device or a link, whatever the name was a moment before) and at most MAX_STRUCTURE_BYTES;
otherwise the built-in structure of that name. Its name is its file's.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from controller.clock import Structure, StructureError, check_structure_name, structure_from_data
from controller.datafiles import ProblemsError, parse_toml
from controller.payouts import PayoutTable, PayoutTableError, payout_table_from_data
from controller.profiles import Profile, ProfileError, profile_from_data

MAX_STRUCTURE_BYTES = 256 * 1024


def read_toml(path: str | Path, error: type[ProblemsError]) -> dict[str, Any]:
    """The TOML file at ``path``, or ``error`` saying why it cannot be read or parsed."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise error(str(path), [f"cannot read: {exc.strerror}"]) from None
    return parse_toml(text, error, str(path))


def _builtin(folder: str) -> list[str]:
    return sorted(p.name[: -len(".toml")] for p in (resources.files("houses") / folder).iterdir()
                  if p.name.endswith(".toml"))


def builtin_names() -> list[str]:
    """The built-in profiles, by name."""
    return _builtin("profiles")


def builtin_structures() -> list[str]:
    """The built-in blind structures, by name."""
    return _builtin("structures")


def builtin_payout_tables() -> list[str]:
    """The built-in payout tables, by name."""
    return _builtin("payouts")


def load_payout_table(name_or_path: str) -> PayoutTable:
    """A built-in payout table by name, or a house's own from a ``.toml`` path."""
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        return payout_table_from_data(read_toml(name_or_path, PayoutTableError), name_or_path)
    resource = resources.files("houses") / "payouts" / f"{name_or_path}.toml"
    if not resource.is_file():
        raise PayoutTableError(name_or_path, [
            f"no payout table named {name_or_path!r} (built-in: "
            f"{', '.join(builtin_payout_tables())}; or give the path of a .toml file)"])
    return payout_table_from_data(parse_toml(resource.read_text(encoding="utf-8"),
                                             PayoutTableError, name_or_path), name_or_path)


def load_profile(name_or_path: str, *, _seen: tuple[str, ...] = ()) -> Profile:
    """A built-in profile by name, or a house's own profile from a ``.toml`` path; a base it
    inherits from is loaded the same way."""
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        return profile_from_data(read_toml(name_or_path, ProfileError), name_or_path,
                                 resolve=load_profile, _seen=_seen)
    resource = resources.files("houses") / "profiles" / f"{name_or_path}.toml"
    if not resource.is_file():
        raise ProfileError(
            name_or_path,
            [f"no profile named {name_or_path!r} (built-in: {', '.join(builtin_names())}; "
             "or give the path of a .toml file)"],
        )
    data = parse_toml(resource.read_text(encoding="utf-8"), ProfileError, name_or_path)
    return profile_from_data(data, name_or_path, resolve=load_profile, _seen=_seen)


def load_structure(name: str) -> Structure:
    """The built-in structure called ``name``."""
    check_structure_name(name)
    resource = resources.files("houses") / "structures" / f"{name}.toml"
    if not resource.is_file():
        raise StructureError(name, [
            f"no structure named {name!r} (built-in: {', '.join(builtin_structures())})"])
    data = parse_toml(resource.read_text(encoding="utf-8"), StructureError, name)
    return structure_from_data(data, name)


def structure_names(directory: str | Path | None) -> list[str]:
    """Every structure a clock can start: the built-in ones and the house's own (the regular
    files ``NAME.toml`` with a valid name in ``directory``), by name."""
    names = set(builtin_structures())
    if directory is not None and Path(directory).is_dir():
        for path in Path(directory).glob("*.toml"):
            try:
                check_structure_name(path.stem)
            except StructureError:
                continue
            if path.is_file():
                names.add(path.stem)
    return sorted(names)


def _read_regular_file(path: Path, limit: int) -> bytes | None:
    """At most ``limit + 1`` bytes of ``path`` if it is a regular file, else None. Checked on
    the opened descriptor, not the name: a FIFO or a link swapped in after a check of the name
    would hang the reader (a FIFO's open waits for a writer) or lead elsewhere."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # absent, a link (ELOOP), unreadable
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        left = limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 65536))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def house_structure(name: str, directory: str | Path | None) -> Structure:
    """The structure called ``name``: ``<directory>/<name>.toml`` if it is a regular file,
    else the built-in one."""
    check_structure_name(name)
    if directory is not None:
        raw = _read_regular_file(Path(directory) / f"{name}.toml", MAX_STRUCTURE_BYTES)
        if raw is not None:
            if len(raw) > MAX_STRUCTURE_BYTES:
                raise StructureError(name, [f"the file is over {MAX_STRUCTURE_BYTES} bytes"])
            return structure_from_data(parse_toml(raw.decode("utf-8", "replace"),
                                                  StructureError, name), name)
    try:
        return load_structure(name)
    except StructureError:
        if directory is None:
            raise
        raise StructureError(name, [f"no structure named {name!r} in {directory} or among "
                                    "the built-in ones"]) from None
