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
    who = [name for name, bits in (("its group", 0o070), ("other users", 0o007))
           if mode & bits]
    can = [verb for verb, bits in (("read", 0o044), ("change", 0o022)) if mode & bits]
    return (f"{os.fspath(path)} holds {holds} and its mode {mode:04o} lets "
            f"{' and '.join(who)} {' and '.join(can) or 'run'} it: run `chmod 600 "
            f"{os.fspath(path)}` (the service's user owning it); refused until then, as ssh "
            "refuses a private key others can read")
