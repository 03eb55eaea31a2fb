"""The dashboard's users and sessions for ``--login-required`` (``login.py`` serves the pages).

users.properties is rocketmq-dashboard's file (``UserServiceImpl.FileBasedUserInfoStore``):
one ``user=password[,role]`` a line, role ``1`` (or ``admin``) for an admin and ``0``,
``normal`` or nothing for a normal (read-only) user; ``#`` starts a comment. It is read again
when it changes, as rocketmq-dashboard's is, so adding a user needs no restart. Sessions live
in the server's memory: a restart logs everyone out.
"""

from __future__ import annotations

import secrets
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request

SESSION_COOKIE = "rocketq_session"
USERS_FILE = "users.properties"
SESSION_TTL_S = 12 * 3600
ADMIN, NORMAL = "admin", "normal"


@dataclass(frozen=True)
class User:
    name: str
    password: str
    role: str

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN


#: who is logged in for the request being served (None: no login required), for the templates
CURRENT_USER: ContextVar[User | None] = ContextVar("dashboard_user", default=None)


def parse_users(text: str) -> dict[str, User]:
    users = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        name, sep, rest = line.partition("=")
        if not sep or not name.strip():
            continue
        password, _, role = rest.strip().partition(",")
        is_admin = role.strip().lower() in ("1", ADMIN)
        users[name.strip()] = User(name.strip(), password.strip(), ADMIN if is_admin else NORMAL)
    return users


class Logins:
    """The users file (re-read when its mtime changes) and the open sessions."""

    def __init__(self, users_path: Path) -> None:
        self.users_path = users_path
        self._users: dict[str, User] = {}
        self._mtime_ns = -1
        self._sessions: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def users(self) -> dict[str, User]:
        try:
            mtime = self.users_path.stat().st_mtime_ns
        except OSError:
            return {}
        with self._lock:
            if mtime != self._mtime_ns:
                self._users = parse_users(self.users_path.read_text(encoding="utf-8"))
                self._mtime_ns = mtime
            return self._users

    def check(self, name: str, password: str) -> User | None:
        user = self.users().get(name)
        if user is None or not secrets.compare_digest(user.password.encode(), password.encode()):
            return None
        return user

    def open_session(self, user: User) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[sid] = (user.name, time.monotonic() + SESSION_TTL_S)
        return sid

    def close_session(self, sid: str) -> None:
        with self._lock:
            self._sessions.pop(sid, None)

    def user_of(self, request: Request) -> User | None:
        sid = request.cookies.get(SESSION_COOKIE, "")
        with self._lock:
            found = self._sessions.get(sid)
        if found is None or found[1] < time.monotonic():
            return None
        return self.users().get(found[0])  # a user removed from the file is logged out
