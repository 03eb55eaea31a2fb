"""Dashboard: what every page and API handler shares (the admin client, the server-kept
history and its sampler, the logins and templates); ``app.py`` routes requests to the handlers
in ``pages.py``, ``overview.py``, ``producers.py``, ``login.py`` and ``api.py``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse

from rocketq.admin import AsyncAdminClient
from rocketq.dashboard.guard import CURRENT_TOKEN
from rocketq.dashboard.history_store import FINE_STEP_S, HistoryStore
from rocketq.dashboard.users import CURRENT_USER, USERS_FILE, Logins

if TYPE_CHECKING:
    from rocketq.client.aio import Producer
    from rocketq.dashboard.sampler import HistorySampler

HERE = Path(__file__).parent
#: the group of the dashboard's own producer (test message, DLQ resend)
PRODUCER_GROUP = "PID_ROCKETQ_DASHBOARD"


class Dashboard:
    """What every handler shares: the admin client (signed with the dashboard's own ACL
    account when it has one), the history, the logins (None without --login-required)."""

    def __init__(
        self,
        namesrv_addr: str,
        *,
        timeout_s: float = 5.0,
        data_path: Path | None = None,
        login_required: bool = False,
        access_key: str = "",
        secret_key: str = "",
        history_step_s: float = FINE_STEP_S,
    ) -> None:
        self.namesrv_addr = namesrv_addr
        self.timeout_s = timeout_s
        self.data_path = data_path
        self.access_key, self.secret_key = access_key, secret_key
        history_path = data_path / "history" if data_path is not None else None
        self.history = HistoryStore(
            history_path, fine_step_s=history_step_s, coarse_step_s=6 * history_step_s
        )
        self.sampler: HistorySampler | None = None
        self.logins: Logins | None = None
        if login_required:
            if data_path is None:
                raise ValueError("--login-required needs a data path for users.properties")
            self.logins = Logins(data_path / USERS_FILE)
        self._admin: AsyncAdminClient | None = None
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(["html"]),
        )

    @property
    def admin(self) -> AsyncAdminClient:
        if self._admin is None:
            self._admin = AsyncAdminClient(
                self.namesrv_addr,
                timeout_s=self.timeout_s,
                access_key=self.access_key,
                secret_key=self.secret_key,
            )
        return self._admin

    def producer(self) -> Producer:
        """The dashboard's producer, signed with its ACL account."""
        from rocketq.client.aio import Producer

        return Producer(
            PRODUCER_GROUP,
            namesrv_addr=self.namesrv_addr,
            access_key=self.access_key,
            secret_key=self.secret_key,
        )

    async def start(self) -> None:
        from rocketq.dashboard.sampler import HistorySampler

        self.sampler = HistorySampler(self.admin, self.history)
        self.sampler.start()

    async def close(self) -> None:
        sampler, self.sampler = self.sampler, None
        if sampler is not None:
            await sampler.stop()
        admin, self._admin = self._admin, None
        if admin is not None:
            await admin.close()

    def render(self, template_name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        template = self.templates.get_template(template_name)
        context.setdefault("namesrv_addr", self.namesrv_addr)
        context.setdefault("csrf_token", CURRENT_TOKEN.get())
        context.setdefault("current_user", CURRENT_USER.get())
        return HTMLResponse(template.render(**context), status_code=status_code)
