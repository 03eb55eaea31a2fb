"""The JSON the charts poll: ``/api/history/<what>`` reads the server-kept history
(``history_store.py``, filled by ``sampler.py`` every 10 s whether anyone watches or not), so
every viewer sees the same points and a reload or a restart loses none.

    /api/history/cluster              put and get TPS of all brokers together
    /api/history/broker?addr=A        one broker's put and get TPS
    /api/history/topic?name=T         a topic's messages in per second (name=T&name=U: several)
    /api/history/group?name=G         a group's consume TPS and lag

``range`` picks the span: 5m, 10m, 1h (default; 10 s points), 6h, 24h or 7d (1 min points). The
answer is ``{"times": [ms...], "step_s": s, "series": {label: [value or null...]}}``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard

RANGES_S = {
    "5m": 300,
    "10m": 600,
    "1h": 3600,
    "6h": 6 * 3600,
    "24h": 24 * 3600,
    "7d": 7 * 24 * 3600,
}


def _span_s(request: Request) -> float:
    name = request.query_params.get("range", "1h")
    if name not in RANGES_S:
        raise ValueError(f"range {name!r} is not one of {', '.join(RANGES_S)}")
    return float(RANGES_S[name])


def _labelled(board: Dashboard, request: Request, labels: dict[str, str]) -> Response:
    found = board.history.query(list(labels), time.time(), _span_s(request))
    found["series"] = {labels[k]: v for k, v in found["series"].items()}
    return JSONResponse(found)


async def cluster(board: Dashboard, request: Request) -> Response:
    keys = board.history.keys()
    found = board.history.query(
        [k for k in keys if k.startswith("broker:")], time.time(), _span_s(request)
    )
    series = found["series"]
    totals: dict[str, list[float | None]] = {}
    for what, label in (("put", "put TPS"), ("get", "get TPS")):
        rows = [v for k, v in series.items() if k.endswith(f":{what}")]
        totals[label] = [
            round(sum(x for x in column if x is not None), 2)
            if any(x is not None for x in column)
            else None
            for column in zip(*rows, strict=True)
        ] or [None] * len(found["times"])
    found["series"] = totals
    return JSONResponse(found)


async def broker(board: Dashboard, request: Request) -> Response:
    addr = request.query_params.get("addr", "")
    labels = {f"broker:{addr}:put": "put TPS", f"broker:{addr}:get": "get TPS"}
    return _labelled(board, request, labels)


async def topic(board: Dashboard, request: Request) -> Response:
    """Messages in per second of each ``name`` (repeated for several topics)."""
    names = request.query_params.getlist("name")
    return _labelled(board, request, {f"topic:{name}:put": name for name in names})


async def group(board: Dashboard, request: Request) -> Response:
    name = request.query_params.get("name", "")
    labels = {f"group:{name}:tps": "consumed per second", f"group:{name}:lag": "lag (messages)"}
    return _labelled(board, request, labels)
