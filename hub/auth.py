"""Staff accounts for the floor dashboard: a users file, scrypt password hashes, roles, and
sessions held by the hub (a random token in an HttpOnly, SameSite=Strict cookie).

The users file is TOML, written by ``tablectl hub-user``::

    [users.maria]
    role = "floor"
    password = "scrypt$16384$8$1$<salt hex>$<hash hex>"

Roles, from least to most: ``viewer`` sees the dashboard; ``floor`` also acknowledges alerts,
runs the clock and hand-for-hand and sends table commands; ``supervisor`` also reads hand
records with hole and burn cards (the private data the dashboard itself never receives) and
chooses or edits the tournament's payout table (``payouts``).
``broadcast`` stands apart: a production's login, it reads the broadcast feed (featured
tables' hole cards behind the security delay, hub/broadcast_feed.py) and taps folds on it, and
nothing of the floor; no other role reads the feed.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from controller.datafiles import ProblemsError
from houses.loaders import read_toml

ROLES: dict[str, frozenset[str]] = {
    "viewer": frozenset({"see"}),
    "floor": frozenset({"see", "acknowledge", "command", "clock"}),
    "supervisor": frozenset({"see", "acknowledge", "command", "clock", "private", "payouts"}),
    "broadcast": frozenset({"broadcast"}),
}
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
SESSION_SECONDS = 12 * 3600  # one shift
# Throttling: a few free failures, then a delay that doubles with each one, up to a cap.
USER_FREE, USER_CAP = 5, 60.0  # per (name, client address)
ADDRESS_FREE, ADDRESS_CAP = 20, 300.0  # per client address, whatever the names
# Per name, whatever the addresses (guesses spread over many): after a few, one check every few
# seconds at most. Never from an address where the name has logged in before (the room's
# tablet): so guessing is slowed and nobody can lock staff out.
ACCOUNT_FREE, ACCOUNT_CAP = 10, 8.0
MAX_TRUSTED = 16  # addresses remembered per name
BACKOFF_BASE = 2.0
FAILURE_WINDOW = 900.0  # failures older than this are forgotten
MAX_FAILURE_KEYS = 10_000
SCRYPT_AT_ONCE = 2
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}

log = logging.getLogger("tablectl.hub")


class UsersFileError(ProblemsError):
    """The users file is wrong: every problem, each with its key."""

    subject = "users file"


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT)
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        computed = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n),
                                  r=int(r), p=int(p))
    except ValueError:
        return False
    return hmac.compare_digest(computed.hex(), digest)


@dataclass(frozen=True)
class User:
    name: str
    role: str
    password: str

    def may(self, permission: str) -> bool:
        return permission in ROLES[self.role]


def load_users(path: Path | str) -> dict[str, User]:
    data = read_toml(str(path), UsersFileError)
    problems, users = [], {}
    for key in data:
        if key != "users":
            problems.append(f"{key}: unknown key (the file holds [users.NAME] tables)")
    for name, entry in (data.get("users") or {}).items():
        where = f"users.{name}"
        if not NAME.match(name):
            problems.append(f"{where}: a user name is 1-32 letters, digits, '_', '.' or '-'")
        if not isinstance(entry, dict):
            problems.append(f"{where}: a table with role and password")
            continue
        role, password = entry.get("role"), entry.get("password")
        if role not in ROLES:
            problems.append(f"{where}.role: {role!r} is not one of {', '.join(ROLES)}")
        if not isinstance(password, str) or not password.startswith("scrypt$"):
            problems.append(f"{where}.password: a hash made by `tablectl hub-user`")
        for extra in set(entry) - {"role", "password"}:
            problems.append(f"{where}.{extra}: unknown key")
        users[name] = User(name, str(role), str(password))
    if problems:
        raise UsersFileError(str(path), problems)
    return users


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def save_user(path: Path | str, name: str, role: str, password: str) -> None:
    """Add or replace one user (the password hashed), keeping the others. The same password
    again keeps its hash, so that a role changed this way narrows or widens the user's
    sessions instead of ending them (a new password ends them: ``Sessions``)."""
    if not NAME.match(name):
        raise ValueError(f"user name {name!r}: 1-32 letters, digits, '_', '.' or '-'")
    if role not in ROLES:
        raise ValueError(f"role {role!r} is not one of {', '.join(ROLES)}")
    if len(password) < 8:
        raise ValueError("a staff password has at least 8 characters")
    path = Path(path)
    users = load_users(path) if path.exists() else {}
    before = users.get(name)
    if before is not None and check_password(password, before.password):
        hashed = before.password
    else:
        hashed = hash_password(password)
    users[name] = User(name, role, hashed)
    lines = ["# Staff of the floor dashboard: written by `tablectl hub-user`.", ""]
    for user in sorted(users.values(), key=lambda u: u.name):
        lines += [f"[users.{user.name}]", f"role = {_quote(user.role)}",
                  f"password = {_quote(user.password)}", ""]
    # Created 0600, never briefly readable by others (write, then chmod, left a window), and
    # swapped in whole.
    partial = path.with_name(path.name + ".new")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an older file of that name kept its mode
        os.write(fd, "\n".join(lines).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)


class UsersFile:
    """The users file, read again when it changes: a login added with ``tablectl hub-user``
    works without restarting the hub, and one taken out or given a new password ends its
    sessions (``Sessions``). A file changed into one that does not load, or whose mode lets
    others read or change it (``loose``, the composition root's check of a secret file: what
    is wrong, or None), keeps the accounts read last (``problem`` says why, logged once); a
    loose or broken file to begin with is refused (UsersFileError).

    A change is seen by looking at the file's inode, times and size (one ``stat``; a chmod
    changes its ctime): every request looks, and the event streams, which check their user at
    each delivery, accept a look up to ``max_age`` old, so that however many streams there
    are the file is looked at a few times a second at most for them."""

    def __init__(self, path: Path | str, *, loose: Callable[[Path], str | None]) -> None:
        self.path = Path(path)
        self._loose = loose
        self._seen = self._stamp()
        self._looked_at = time.monotonic()
        problem = loose(self.path)
        if problem is not None:
            raise UsersFileError(str(self.path), [problem])
        self.users = load_users(self.path)
        self.problem: str | None = None
        self._lock = threading.Lock()

    def _stamp(self) -> tuple[int, int, int, int] | None:
        try:
            info = self.path.stat()
        except OSError:
            return None
        # The inode too: `tablectl hub-user` swaps a new file in, and two files written within
        # one tick of the kernel's clock may have the same times and size.
        return info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size

    def current(self, max_age: float = 0.0) -> dict[str, User]:
        """The users as the file says, looked at again unless that was done less than
        ``max_age`` seconds ago."""
        with self._lock:
            now = time.monotonic()
            if max_age > 0 and now - self._looked_at < max_age:
                return self.users
            self._looked_at = now
            stamp = self._stamp()
            if stamp == self._seen:
                return self.users
            loose = self._loose(self.path)
            problem = None if loose is None else str(UsersFileError(str(self.path), [loose]))
            if problem is None:
                try:
                    users = load_users(self.path)
                except (OSError, ValueError) as exc:  # a half-edited file: keep the last
                    problem = str(exc)
                else:
                    if self._stamp() != stamp:  # changed (or its mode) while it was read
                        return self.users  # read again at the next look
                    self.users = users
            self._seen = stamp
            if problem is not None and problem != self.problem:
                log.warning("%s\nThe hub keeps the %d account(s) it read last until the file "
                            "is mended.", problem, len(self.users))
            elif problem is None and self.problem is not None:
                log.warning("users file %s mended: read again", self.path)
            self.problem = problem
            return self.users


class LoginRefused(ValueError):
    """A login the hub refuses: the same words for a wrong name and a wrong password."""


class Session(NamedTuple):
    """A logged-in staff member's session: its user as the hub knew it at login."""

    name: str
    expires: float  # monotonic seconds
    password: str  # the user's password hash at login: another one ends the session


class Sessions:
    """Logged-in staff, by token; time is passed in (seconds, monotonic).

    A session is bound to its user's password as it was at login: a new password, or the
    user taken out of the file, ends every session made before (the next request is refused,
    as after a logout). The role is read at each request, so a changed one narrows or widens
    what the session may do from the next request on.

    Guessing is throttled per client address and per (name, address), with a delay that
    doubles with each failure past a few: an attacker elsewhere on the venue's Wi-Fi slows
    only itself, never a floor manager on the room's tablet. Guesses at one name from many
    addresses meet a ceiling per name (one check every ACCOUNT_CAP seconds past a few), which
    does not apply where that name has logged in before. Checking a failure and recording
    it is one step under a lock (an attempt counts as failed until its password is found
    right), so parallel guesses cannot slip past the count; an unknown name costs the same
    scrypt as a known one (no timing oracle); at most two scrypt checks run at once; what is
    remembered of failures is pruned and bounded.
    """

    def __init__(self, users: dict[str, User] | UsersFile) -> None:
        self._users = users
        self._sessions: dict[str, Session] = {}
        self._failures: dict[str, list[float]] = {}  # key -> failure times in the window
        self._trusted: dict[str, list[str]] = {}  # name -> addresses it logged in from
        self._lock = threading.Lock()
        # scrypt takes 16 MiB a check: two threads of its own do them all, so that no more
        # run at once and no other thread's allocator keeps 16 MiB after one.
        self._scrypt = ThreadPoolExecutor(SCRYPT_AT_ONCE, thread_name_prefix="scrypt")
        self._dummy = hash_password(secrets.token_hex(16))

    @property
    def users(self) -> dict[str, User]:
        return self._current()

    def _current(self, max_age: float = 0.0) -> dict[str, User]:
        if isinstance(self._users, UsersFile):
            return self._users.current(max_age)
        return self._users

    def _wait(self, key: str, free: int, cap: float, now: float) -> float:
        """Seconds until ``key`` may try again (0: now)."""
        times = self._failures.get(key, [])
        if len(times) < free:
            return 0.0
        delay = min(cap, BACKOFF_BASE * 2 ** (len(times) - free))
        return max(0.0, float(times[-1] + delay - now))

    def _prune(self, now: float) -> None:
        for key in [k for k, times in self._failures.items()
                    if not times or now - times[-1] > FAILURE_WINDOW]:
            del self._failures[key]
        while len(self._failures) > MAX_FAILURE_KEYS:  # oldest first: dicts keep order
            del self._failures[next(iter(self._failures))]

    def login(self, name: str, password: str, now: float, address: str = "?") -> str:
        """A session token; LoginRefused saying why not."""
        known = NAME.match(name) is not None
        keys = [f"addr {address}"] + ([f"user {name} {address}"] if known else [])
        with self._lock:
            account = known and address not in self._trusted.get(name, ())
            if account:
                keys.insert(1, f"name {name}")
            wait = max(self._wait(keys[0], ADDRESS_FREE, ADDRESS_CAP, now),
                       self._wait(keys[-1], USER_FREE, USER_CAP, now) if known else 0.0,
                       self._wait(keys[1], ACCOUNT_FREE, ACCOUNT_CAP, now) if account
                       else 0.0)
            if wait > 0:
                raise LoginRefused(f"too many failed attempts: wait {math.ceil(wait)} seconds")
            for key in keys:  # failed until found right
                self._failures.setdefault(key, []).append(now)
            self._prune(now)
        user = self.users.get(name) if known else None
        right = self._scrypt.submit(check_password, password[:1024],
                                    user.password if user else self._dummy).result()
        if user is None or not right:
            raise LoginRefused("wrong user name or password")
        with self._lock:
            for key in keys:
                times = self._failures.get(key, [])
                if now in times:
                    times.remove(now)
            self._failures.pop(keys[-1], None)  # this name from this address: a clean slate
            trusted = self._trusted.setdefault(name, [])
            if address not in trusted:
                trusted.append(address)
                del trusted[:-MAX_TRUSTED]
            token = secrets.token_urlsafe(32)
            self._sessions[token] = Session(name, now + SESSION_SECONDS, user.password)
            expired = [t for t, session in self._sessions.items() if session.expires <= now]
            for old in expired:
                del self._sessions[old]
        return token

    def user(self, token: str | None, now: float, max_age: float = 0.0) -> User | None:
        """The session's user as the users file says now (its role too); None when there is
        none: logged out, expired, the user's password changed since the login or the user
        taken out (the session then ends). ``max_age``: a look at the users file that old
        will do (UsersFile.current)."""
        with self._lock:
            session = self._sessions.get(token or "")
            if session is None:
                return None
            user = self._current(max_age).get(session.name)
            if now >= session.expires or user is None or user.password != session.password:
                del self._sessions[token or ""]
                return None
        return user

    def logout(self, token: str | None) -> None:
        with self._lock:
            self._sessions.pop(token or "", None)
