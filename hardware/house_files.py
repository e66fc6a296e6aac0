"""The house's own data files, read for the pure core: blind structures from the directory
the configuration names (the hub's ``--structures``, a table's ``clock.structures``).

Asked for by name only (``check_structure_name``: no path from a command or an input reaches
the filesystem), read only if a regular file (a FIFO or a device is never opened) and at most
MAX_STRUCTURE_BYTES; otherwise the built-in structure of that name.
"""

from __future__ import annotations

from pathlib import Path

from controller.clock import (
    Structure,
    StructureError,
    check_structure_name,
    load_structure,
    structure_from_data,
)
from controller.datafiles import parse_toml

MAX_STRUCTURE_BYTES = 256 * 1024


def house_structure(name: str, directory: str | Path | None) -> Structure:
    """The structure called ``name``: ``<directory>/<name>.toml`` if it is a regular file,
    else the built-in one."""
    check_structure_name(name)
    if directory is not None:
        path = Path(directory) / f"{name}.toml"
        if path.is_file():
            with path.open("rb") as handle:
                raw = handle.read(MAX_STRUCTURE_BYTES + 1)
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
