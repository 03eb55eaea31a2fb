"""``--login-required`` (rocketmq-dashboard's ``rocketmq.config.loginRequired``): the users of
``<dataPath>/users.properties`` log in; a session cookie carries who they are; a normal user
reads, only an admin changes anything.

The users and sessions are ``users.py``'s; the session id travels in an ``HttpOnly``,
``SameSite=Strict`` cookie. The login form itself is a POST and carries the CSRF token as every
other form does (``guard.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from rocketq.dashboard.users import SESSION_COOKIE, User

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard

#: paths anyone may open without a session
OPEN_PATHS = ("/login", "/static/")
#: what a normal (read-only) user may still POST: logging in as someone else, logging out
ACCOUNT_PATHS = ("/login", "/logout")


def refusal(request: Request, user: User | None) -> Response | None:
    """The answer to a request without a session where one is needed (None to serve it)."""
    path = request.url.path
    if path.startswith(OPEN_PATHS):
        return None
    if user is None:
        if path.startswith("/api/"):
            return JSONResponse({"error": "log in first"}, status_code=401)
        target = path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/login?next={quote(target)}", status_code=303)
    return None


def read_only_refusal(request: Request, user: User | None) -> str:
    """Why a state-changing request of a normal user is refused ("" to serve it)."""
    if user is None or user.is_admin or request.url.path in ACCOUNT_PATHS:
        return ""
    return f"refused: {user.name} is a normal (read-only) user; an admin may do this"


async def login_page(board: Dashboard, request: Request) -> Response:
    logins = board.logins
    if logins is None:
        return RedirectResponse("/", status_code=303)
    target = request.query_params.get("next", "/")
    if request.method == "POST":
        form = await request.form()
        target = str(form.get("next") or "/")
        user = logins.check(str(form.get("username", "")), str(form.get("password", "")))
        if user is not None:
            if not target.startswith("/") or target.startswith("//"):
                target = "/"  # never redirect off the dashboard
            response = RedirectResponse(target, status_code=303)
            response.set_cookie(
                SESSION_COOKIE,
                logins.open_session(user),
                path="/",
                httponly=True,
                samesite="strict",
            )
            return response
        return board.render(
            "login.html", 401, page="login", next=target, error="wrong user name or password"
        )
    return board.render("login.html", page="login", next=target, error="")


async def logout(board: Dashboard, request: Request) -> Response:
    if board.logins is not None:
        board.logins.close_session(request.cookies.get(SESSION_COOKIE, ""))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response
