"""The dashboard's ASGI app: Starlette routes, Jinja2 pages, Chart.js charts.

``create_app(namesrv_addr)`` builds it; one ``AsyncAdminClient`` (opened in the lifespan) serves
every page, so the dashboard sees exactly what ``rocketq admin`` and users' code see. Pages are
rendered on the server; ``static/app.js`` only polls the JSON endpoints for the charts, which
read the history the lifespan's sampler keeps under ``data_path`` (``sampler.py``).

With ``login_required`` every request but the login page needs a session (``login.py``), and
a normal (read-only) user's state-changing requests are refused; the CSRF guard (``guard.py``)
applies to every POST, the login form's too.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from rocketq.dashboard import (
    api,
    group_pages,
    guard,
    login,
    message_pages,
    overview,
    pages,
    producers,
    topic_pages,
    users,
)
from rocketq.dashboard.board import Dashboard
from rocketq.dashboard.history_store import FINE_STEP_S
from rocketq.errors import RocketQError, describe

HERE = Path(__file__).parent


def create_app(
    namesrv_addr: str,
    *,
    timeout_s: float = 5.0,
    data_path: Path | None = None,
    login_required: bool = False,
    access_key: str = "",
    secret_key: str = "",
    history_step_s: float = FINE_STEP_S,
) -> Starlette:
    """``data_path``: where the history and users.properties live (None: history in memory
    only); ``access_key``/``secret_key``: the dashboard's own ACL account."""
    board = Dashboard(
        namesrv_addr,
        timeout_s=timeout_s,
        data_path=data_path,
        login_required=login_required,
        access_key=access_key,
        secret_key=secret_key,
        history_step_s=history_step_s,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await board.start()
        try:
            yield
        finally:
            await board.close()

    async def on_error(request: Request, exc: Exception) -> Response:
        """A refused or unreachable server: the page says why (JSON for the API), status 502."""
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": describe(exc)}, status_code=502)
        return board.render("error.html", 502, error=describe(exc))

    def bind(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            token, fresh = guard.session_token(request)
            user = board.logins.user_of(request) if board.logins is not None else None
            current = guard.CURRENT_TOKEN.set(token)
            current_user = users.CURRENT_USER.set(user)
            try:
                result: Response = await _guarded(handler, request, token, fresh, user)
            finally:
                guard.CURRENT_TOKEN.reset(current)
                users.CURRENT_USER.reset(current_user)
            if fresh:
                guard.set_token_cookie(result, token)
            return result

        return endpoint

    async def _guarded(
        handler: Any, request: Request, token: str, fresh: bool, user: users.User | None
    ) -> Response:
        if board.logins is not None:
            refused = login.refusal(request, user)
            if refused is not None:
                return refused
        if request.method not in guard.SAFE_METHODS:
            reason = await guard.refusal(request, token, fresh)
            if reason:
                return board.render("error.html", 403, error=reason)
            reason = login.read_only_refusal(request, user)
            if reason:
                return board.render("error.html", 403, error=reason)
        result: Response = await handler(board, request)
        return result

    routes = [
        Route("/", lambda request: RedirectResponse("/overview")),
        Route("/overview", bind(overview.overview)),
        Route("/producers", bind(producers.producers)),
        Route("/login", bind(login.login_page), methods=["GET", "POST"]),
        Route("/logout", bind(login.logout), methods=["POST"]),
        Route("/cluster", bind(pages.cluster)),
        Route("/broker", bind(pages.broker)),
        Route("/topics", bind(topic_pages.topics), methods=["GET", "POST"]),
        Route("/topic", bind(topic_pages.topic)),
        Route("/topic/update", bind(topic_pages.topic_update), methods=["POST"]),
        Route("/topic/delete", bind(topic_pages.topic_delete), methods=["GET", "POST"]),
        Route("/topic/send", bind(topic_pages.topic_send), methods=["POST"]),
        Route("/groups", bind(group_pages.groups), methods=["GET", "POST"]),
        Route("/group", bind(group_pages.group)),
        Route("/group/update", bind(group_pages.group_update), methods=["POST"]),
        Route("/group/delete", bind(group_pages.group_delete), methods=["GET", "POST"]),
        Route("/group/reset", bind(group_pages.group_reset), methods=["POST"]),
        Route("/group/resend", bind(group_pages.group_resend), methods=["POST"]),
        Route("/messages", bind(message_pages.messages)),
        Route("/message", bind(message_pages.message)),
        Route("/message/resend", bind(message_pages.message_resend), methods=["POST"]),
        Route("/api/history/cluster", bind(api.cluster)),
        Route("/api/history/broker", bind(api.broker)),
        Route("/api/history/topic", bind(api.topic)),
        Route("/api/history/group", bind(api.group)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={RocketQError: on_error, ValueError: on_error, OSError: on_error},
    )
