"""The dashboard's cluster and broker pages, and what every page shows the same way (times,
a message's row). The other pages have a module each: ``topic_pages``, ``group_pages``,
``message_pages``. Each handler asks ``rocketq.admin`` and renders one template; a refusal
renders the error page with the server's reason."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from rocketq.common.message import MessageExt
from rocketq.errors import RocketQError

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard


def fmt_ms(ms: int, *, millis: bool = False) -> str:
    if ms <= 0:
        return "-"
    text = datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S.%f")
    return text[:-3] if millis else text[:-7]


def parse_time(text: str | None) -> int | None:
    """A form's time: empty, epoch ms, or an HTML datetime-local value (local time)."""
    text = (text or "").strip()
    if not text:
        return None
    if text.isdigit():
        return int(text)
    try:
        return int(datetime.datetime.fromisoformat(text).timestamp() * 1000)
    except ValueError:
        raise ValueError(f"{text!r} is not a time (epoch ms or YYYY-MM-DDTHH:MM)") from None


def message_row(msg: MessageExt) -> dict[str, Any]:
    return {
        "msg_id": msg.client_msg_id,
        "offset_id": msg.offset_msg_id,
        "topic": msg.topic,
        "tags": msg.tags or "",
        "msg_keys": " ".join(msg.keys or []),
        "queue": f"{msg.queue_id}@{msg.queue_offset}",
        "store_time": fmt_ms(msg.store_timestamp, millis=True),
        "body": msg.body.decode("utf-8", "replace"),
        "properties": dict(sorted(msg.properties.items())),
        "born_host": f"{msg.born_host[0]}:{msg.born_host[1]}",
        "store_host": f"{msg.store_host[0]}:{msg.store_host[1]}",
        "reconsume_times": msg.reconsume_times,
    }


async def cluster(board: Dashboard, request: Request) -> Response:
    info = await board.admin.examine_broker_cluster_info()
    brokers = []
    for cluster_name in sorted(info.cluster_addr_table):
        for name in sorted(info.cluster_addr_table[cluster_name]):
            data = info.broker_addr_table.get(name)
            for bid, addr in sorted((data.broker_addrs if data else {}).items()):
                try:
                    kv = await board.admin.fetch_broker_runtime_stats(addr)
                except RocketQError as exc:
                    kv = {"error": str(exc)}
                brokers.append(
                    {"cluster": cluster_name, "name": name, "id": bid, "addr": addr, "kv": kv}
                )
    return board.render("cluster.html", page="cluster", brokers=brokers)


async def broker(board: Dashboard, request: Request) -> Response:
    addr = request.query_params.get("addr", "")
    runtime = await board.admin.fetch_broker_runtime_stats(addr)
    config = await board.admin.get_broker_config(addr)
    return board.render(
        "broker.html",
        page="cluster",
        addr=addr,
        runtime=sorted(runtime.items()),
        config=sorted(config.items()),
    )
