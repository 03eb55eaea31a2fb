"""Dashboard: what every page and API handler shares (the admin client, chart history and
templates); ``app.py`` routes requests to the handlers in ``pages.py`` and ``api.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse

from rocketq.admin import AsyncAdminClient
from rocketq.dashboard.guard import CURRENT_TOKEN
from rocketq.dashboard.history import History

HERE = Path(__file__).parent


class Dashboard:
    """What every handler shares: the admin client, the chart history, the templates."""

    def __init__(self, namesrv_addr: str, *, timeout_s: float = 5.0) -> None:
        self.namesrv_addr = namesrv_addr
        self.timeout_s = timeout_s
        self.history = History()
        self._admin: AsyncAdminClient | None = None
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(["html"]),
        )

    @property
    def admin(self) -> AsyncAdminClient:
        if self._admin is None:
            self._admin = AsyncAdminClient(self.namesrv_addr, timeout_s=self.timeout_s)
        return self._admin

    async def close(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            await admin.close()

    def render(self, template_name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        template = self.templates.get_template(template_name)
        context.setdefault("namesrv_addr", self.namesrv_addr)
        context.setdefault("csrf_token", CURRENT_TOKEN.get())
        return HTMLResponse(template.render(**context), status_code=status_code)
