"""Cross-site request refusal: a page on another site cannot make the operator's browser
create a topic, send a message, reset offsets or resend a DLQ message.

Theory of operation: every response to a session without one sets a random token in a
``SameSite=Strict``, ``HttpOnly`` cookie, and every page renders it into its forms (the
double-submit pattern). A request that is not GET/HEAD/OPTIONS must carry the form field
equal to its cookie (a browser sends no Strict cookie on a cross-site request, and another
site cannot read it), and, when the browser says where the request comes from, come from the
dashboard itself: ``Sec-Fetch-Site`` same-origin or none (typed by the user), ``Origin`` this
dashboard's origin. GETs change nothing, so links and reloads need no token.
"""

from __future__ import annotations

import secrets
from contextvars import ContextVar

from starlette.requests import Request
from starlette.responses import Response

CSRF_COOKIE = "rocketq_csrf"
CSRF_FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: the token of the request being served, for the templates (``Dashboard.render``)
CURRENT_TOKEN: ContextVar[str] = ContextVar("csrf_token", default="")


def session_token(request: Request) -> tuple[str, bool]:
    """The session's token and whether it is new (then the response sets the cookie)."""
    token = request.cookies.get(CSRF_COOKIE, "")
    if len(token) >= 32:
        return token, False
    return secrets.token_urlsafe(32), True


def set_token_cookie(response: Response, token: str) -> None:
    response.set_cookie(CSRF_COOKIE, token, path="/", httponly=True, samesite="strict")


async def refusal(request: Request, token: str, fresh: bool) -> str:
    """Why a state-changing request is refused ("" to let it through)."""
    site = request.headers.get("sec-fetch-site", "")
    if site and site not in ("same-origin", "none"):
        return f"refused a {site} request: submit the form from the dashboard's own page"
    origin = request.headers.get("origin", "")
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    if origin and origin != own:
        return (
            f"refused a cross-site request from {origin} (this dashboard is {own}): "
            "submit the form from the dashboard's own page"
        )
    form = await request.form()
    sent = str(form.get(CSRF_FIELD, ""))
    if fresh or not secrets.compare_digest(sent.encode(), token.encode()):
        return (
            "refused: the form carries no valid session token (a cross-site request, or a "
            "page from before the session): reload the page and submit again"
        )
    return ""
