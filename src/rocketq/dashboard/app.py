"""The dashboard's ASGI app: Starlette routes, Jinja2 pages, Chart.js charts.

``create_app(namesrv_addr)`` builds it; one ``AsyncAdminClient`` (opened in the lifespan) serves
every page, so the dashboard sees exactly what ``rocketq admin`` and users' code see. Pages are
rendered on the server; ``static/app.js`` only polls the JSON endpoints for the charts.
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

from rocketq.dashboard import api, group_pages, guard, message_pages, pages, topic_pages
from rocketq.dashboard.board import Dashboard
from rocketq.errors import RocketQError, describe

HERE = Path(__file__).parent


def create_app(namesrv_addr: str, *, timeout_s: float = 5.0) -> Starlette:
    board = Dashboard(namesrv_addr, timeout_s=timeout_s)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
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
            current = guard.CURRENT_TOKEN.set(token)
            try:
                result: Response = await _guarded(handler, request, token, fresh)
            finally:
                guard.CURRENT_TOKEN.reset(current)
            if fresh:
                guard.set_token_cookie(result, token)
            return result

        return endpoint

    async def _guarded(handler: Any, request: Request, token: str, fresh: bool) -> Response:
        if request.method not in guard.SAFE_METHODS:
            reason = await guard.refusal(request, token, fresh)
            if reason:
                return board.render("error.html", 403, error=reason)
        result: Response = await handler(board, request)
        return result

    routes = [
        Route("/", lambda request: RedirectResponse("/cluster")),
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
        Route("/api/tps", bind(api.tps)),
        Route("/api/lag", bind(api.lag)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={RocketQError: on_error, ValueError: on_error, OSError: on_error},
    )
