"""Files that hold a secret (a password file, the staff's users file, a configuration with a
password in it) are refused when users other than their owner may read or change them, as ssh
refuses a private key others can read: a secret others could read is a secret no more, and
the service said nothing while it used it.
"""

from __future__ import annotations

import os
import stat

# The permission bits of the owner's group and of everyone else.
NOT_THE_OWNER = 0o077
# Each class of users but the owner, and how far its three bits are shifted in a mode.
CLASSES = (("its group", 3), ("other users", 0))
# What each of a class's bits lets it do.
VERBS = (("read", 0o4), ("change", 0o2), ("run", 0o1))


def loose_secret(path: str | os.PathLike[str], holds: str) -> str | None:
    """What is wrong with the file at ``path``, which holds ``holds`` (in words), when users
    other than its owner may read, change or run it, and the fix; None when only its owner
    may (or it cannot be looked at: reading it then says why)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    if not mode & NOT_THE_OWNER:
        return None
    return (f"{os.fspath(path)} holds {holds} and its mode {mode:04o} lets {_allowed(mode)}: "
            f"run `chmod 600 {os.fspath(path)}` (the service's user owning it); refused "
            "until then, as ssh refuses a private key others can read")


def _allowed(mode: int) -> str:
    """What the users other than the owner may do, each class exactly ("its group read it, and
    other users change it", for 0642), said once for both when alike."""
    can = {who: _and([verb for verb, bit in VERBS if mode >> shift & bit])
           for who, shift in CLASSES}
    may = {who: verbs for who, verbs in can.items() if verbs}
    if len(may) == 2 and len(set(may.values())) == 1:
        return f"{_and(list(may))} {next(iter(may.values()))} it"
    return ", and ".join(f"{who} {verbs} it" for who, verbs in may.items())


def _and(words: list[str]) -> str:
    """'read', 'read and change', 'read, change and run'."""
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)
