"""Staff accounts for the floor dashboard: a users file, scrypt password hashes, roles, and
sessions held by the hub (a random token in an HttpOnly, SameSite=Strict cookie).

The users file is TOML, written by ``tablectl hub-user``::

    [users.maria]
    role = "floor"
    password = "scrypt$16384$8$1$<salt hex>$<hash hex>"

Roles, from least to most: ``viewer`` sees the dashboard; ``floor`` also acknowledges alerts,
runs the clock and hand-for-hand and sends table commands; ``supervisor`` also reads hand
records with hole and burn cards (the private data the dashboard itself never receives).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from controller.datafiles import ProblemsError, read_toml

ROLES: dict[str, frozenset[str]] = {
    "viewer": frozenset({"see"}),
    "floor": frozenset({"see", "acknowledge", "command", "clock"}),
    "supervisor": frozenset({"see", "acknowledge", "command", "clock", "private"}),
}
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
SESSION_SECONDS = 12 * 3600  # one shift
MAX_FAILURES, LOCKOUT_SECONDS = 5, 60.0
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


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
    """Add or replace one user (the password hashed), keeping the others."""
    if not NAME.match(name):
        raise ValueError(f"user name {name!r}: 1-32 letters, digits, '_', '.' or '-'")
    if role not in ROLES:
        raise ValueError(f"role {role!r} is not one of {', '.join(ROLES)}")
    if len(password) < 8:
        raise ValueError("a staff password has at least 8 characters")
    path = Path(path)
    users = load_users(path) if path.exists() else {}
    users[name] = User(name, role, hash_password(password))
    lines = ["# Staff of the floor dashboard: written by `tablectl hub-user`.", ""]
    for user in sorted(users.values(), key=lambda u: u.name):
        lines += [f"[users.{user.name}]", f"role = {_quote(user.role)}",
                  f"password = {_quote(user.password)}", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    path.chmod(0o600)


class Sessions:
    """Logged-in staff, by token; time is passed in (seconds, monotonic)."""

    def __init__(self, users: dict[str, User]) -> None:
        self.users = users
        self._sessions: dict[str, tuple[str, float]] = {}
        self._failures: dict[str, list[float]] = {}

    def login(self, name: str, password: str, now: float) -> str:
        """A session token; ValueError saying why not (the same words for a wrong name and
        a wrong password, so that names cannot be probed)."""
        recent = [t for t in self._failures.get(name, []) if now - t < LOCKOUT_SECONDS]
        if len(recent) >= MAX_FAILURES:
            raise ValueError(f"too many failed attempts: wait {LOCKOUT_SECONDS:.0f} seconds")
        user = self.users.get(name)
        if user is None or not check_password(password, user.password):
            self._failures[name] = [*recent, now]
            raise ValueError("wrong user name or password")
        self._failures.pop(name, None)
        token = secrets.token_urlsafe(32)
        self._sessions[token] = (name, now + SESSION_SECONDS)
        return token

    def user(self, token: str | None, now: float) -> User | None:
        if not token or token not in self._sessions:
            return None
        name, expires = self._sessions[token]
        if now >= expires or name not in self.users:
            del self._sessions[token]
            return None
        return self.users[name]

    def logout(self, token: str | None) -> None:
        self._sessions.pop(token or "", None)
