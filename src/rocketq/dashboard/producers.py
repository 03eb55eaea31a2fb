"""The producers page (rocketmq-dashboard's producer view): the connections of a producer
group on the brokers of a topic (GET_PRODUCER_CONNECTION_LIST, mqadmin producerConnection),
each with its client id, address, language and version. As in rocketmq-dashboard the operator
names the topic and the group: a broker keeps its producers by group, and asking every broker
for every group it knows is RocketMQ 5's GET_ALL_PRODUCER_INFO, which rocketq does not serve."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from rocketq.dashboard.topic_pages import topic_kind
from rocketq.errors import BrokerResponseError, describe
from rocketq.remoting.protocol.admin_bodies import ProducerConnection

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
    if asked:
        rows = [
            {
                "id": c.client_id,
                "addr": c.client_addr,
                "language": c.language,
                "version": c.version,
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
    )
