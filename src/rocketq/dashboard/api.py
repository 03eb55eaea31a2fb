"""The JSON the charts poll: a topic's messages-in per second (from the sum of its queues' max
offsets between two polls) and a group's lag per queue, each call adding a point to the series
it returns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard


async def tps(board: Dashboard, request: Request) -> Response:
    topics = request.query_params.getlist("topic")
    values: dict[str, float] = {}
    for topic in topics:
        stats = await board.admin.examine_topic_stats(topic)
        total = sum(off.max_offset for off in stats.offset_table.values())
        rate = board.history.rate(f"total:{topic}", total)
        if rate is not None:
            values[topic] = round(rate, 2)
    key = "tps:" + ",".join(sorted(topics))
    series = board.history.series(key)
    if values:
        series.add(values)
    return JSONResponse(series.to_json())


async def lag(board: Dashboard, request: Request) -> Response:
    group = request.query_params.get("group", "")
    stats = await board.admin.examine_consume_stats(group)
    values = {
        f"{mq.topic}:{mq.broker_name}:{mq.queue_id}": float(w.broker_offset - w.consumer_offset)
        for mq, w in stats.offset_table.items()
    }
    series = board.history.series(f"lag:{group}")
    series.add(values)
    return JSONResponse(series.to_json())
