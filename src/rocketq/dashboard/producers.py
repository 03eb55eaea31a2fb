"""The producers page (rocketmq-dashboard's producer view): the connections of a producer
group on the brokers of a topic (GET_PRODUCER_CONNECTION_LIST, mqadmin producerConnection),
each with its client id, address, language and version. As in rocketmq-dashboard the operator
may name the topic and the group; without them the page lists every producer group of every
master broker (RocketMQ 5's GET_ALL_PRODUCER_INFO, mqadmin producer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from rocketq.dashboard.topic_pages import topic_kind
from rocketq.errors import BrokerResponseError, describe
from rocketq.remoting.protocol.admin_bodies import ProducerConnection
from rocketq.remoting.protocol.codes import version_desc

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard


async def producers(board: Dashboard, request: Request) -> Response:
    topic = request.query_params.get("topic", "").strip()
    group = request.query_params.get("group", "").strip()
    topics = sorted(
        n for n in await board.admin.fetch_all_topic_list() if topic_kind(n) == "normal"
    )
    rows: list[dict[str, Any]] = []
    asked, remark = bool(topic and group), ""
    try:
        found = (
            await board.admin.examine_producer_connection_info(group, topic)
            if asked
            else ProducerConnection()
        )
    except BrokerResponseError as exc:  # a group no broker knows: RocketMQ's SYSTEM_ERROR
        found, remark = ProducerConnection(), describe(exc)
    every = [] if asked else await _every_producer(board)
    if asked:
        rows = [
            {
                "id": c.client_id,
                "addr": c.client_addr,
                "language": c.language,
                "version": version_desc(c.version),
            }
            for c in sorted(found.connection_set, key=lambda c: c.client_id)
        ]
    return board.render(
        "producers.html",
        page="producers",
        topic=topic,
        group=group,
        topics=topics,
        connections=rows,
        asked=asked,
        remark=remark,
        every=every,
    )


async def _every_producer(board: Dashboard) -> list[dict[str, Any]]:
    """Each producer group on each master broker with its producers, by group then client."""
    info = await board.admin.examine_broker_cluster_info()
    rows: list[dict[str, Any]] = []
    for name, data in sorted(info.broker_addr_table.items()):
        addr = data.broker_addrs.get(0)
        if addr is None:
            continue
        try:
            table = await board.admin.get_all_producer_info(addr)
        except BrokerResponseError:  # a broker without the code (RocketMQ 4.x): skipped
            continue
        rows.extend(
            {
                "group": group,
                "broker": name,
                "id": p.client_id,
                "addr": p.remote_ip,
                "language": p.language,
                "version": version_desc(p.version),
            }
            for group, producers in table.data.items()
            for p in producers
        )
    return sorted(rows, key=lambda r: (r["group"], r["broker"], r["id"]))
