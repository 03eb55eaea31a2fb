"""The dashboard's pages (rocketmq-dashboard's set): cluster and brokers, topics (create, route,
status, send a test message), consumer groups (lag per queue, connections, reset by time, DLQ
resend), messages (by topic and time range, by key, by id). Each handler asks ``rocketq.admin``
and renders one template; a refusal renders the error page with the server's reason."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from rocketq.client import Message
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.topic import (
    RETRY_GROUP_TOPIC_PREFIX,
    dlq_topic,
    is_dlq_topic,
    is_retry_topic,
    is_system_topic,
)
from rocketq.common.topic_config import TopicConfig
from rocketq.dashboard.trace_panel import message_trace
from rocketq.errors import ClientError, ConsumerNotOnlineError, RocketQError

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard

#: the default cluster's name, which a broker registers as a topic (clusterTopicEnable)
DEFAULT_CLUSTER_TOPIC = "DefaultCluster"
MESSAGE_LIMIT = 64


def fmt_ms(ms: int) -> str:
    if ms <= 0:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


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


def topic_kind(topic: str) -> str:
    if is_retry_topic(topic):
        return "retry"
    if is_dlq_topic(topic):
        return "dlq"
    if is_system_topic(topic) or topic == DEFAULT_CLUSTER_TOPIC:
        return "system"
    return "normal"


def message_row(msg: MessageExt) -> dict[str, Any]:
    return {
        "msg_id": msg.client_msg_id,
        "offset_id": msg.offset_msg_id,
        "topic": msg.topic,
        "tags": msg.tags or "",
        "msg_keys": " ".join(msg.keys or []),
        "queue": f"{msg.queue_id}@{msg.queue_offset}",
        "store_time": fmt_ms(msg.store_timestamp),
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


async def topics(board: Dashboard, request: Request) -> Response:
    if request.method == "POST":
        form = await request.form()
        name = str(form.get("topic", "")).strip()
        queues = int(str(form.get("queues") or 4))
        cluster_name = str(form.get("cluster") or "DefaultCluster")
        config = TopicConfig(topic_name=name, read_queue_nums=queues, write_queue_nums=queues)
        await board.admin.create_and_update_topic_config_in_cluster(cluster_name, config)
        return RedirectResponse(f"/topic?name={name}", status_code=303)
    names = sorted(await board.admin.fetch_all_topic_list())
    info = await board.admin.examine_broker_cluster_info()
    rows = [{"name": n, "kind": topic_kind(n)} for n in names]
    show = request.query_params.get("show", "normal")
    if show != "all":
        rows = [r for r in rows if r["kind"] == "normal"]
    return board.render(
        "topics.html",
        page="topics",
        topics=rows,
        show=show,
        clusters=sorted(info.cluster_addr_table),
    )


async def _topic_context(board: Dashboard, name: str) -> dict[str, Any]:
    route = await board.admin.examine_topic_route_info(name)
    stats = await board.admin.examine_topic_stats(name)
    queues = [
        {
            "broker": mq.broker_name,
            "qid": mq.queue_id,
            "min": off.min_offset,
            "max": off.max_offset,
            "updated": fmt_ms(off.last_update_timestamp),
        }
        for mq, off in sorted(
            stats.offset_table.items(), key=lambda kv: (kv[0].broker_name, kv[0].queue_id)
        )
    ]
    try:
        groups = (await board.admin.query_topic_consume_by_who(name)).group_list
    except RocketQError:
        groups = []
    try:
        types = await board.admin.examine_topic_message_types(name)
    except RocketQError:  # a route without a master: the page shows no type
        types = {}
    context = {"page": "topics", "name": name, "route": route, "queues": queues, "groups": groups}
    return context | {"types": {b: kind.value if kind else "" for b, kind in types.items()}}


async def topic(board: Dashboard, request: Request) -> Response:
    name = request.query_params.get("name", "")
    return board.render("topic.html", **await _topic_context(board, name))


async def topic_send(board: Dashboard, request: Request) -> Response:
    form = await request.form()
    name = str(form.get("topic", ""))
    msg = Message(
        name,
        str(form.get("body", "")).encode(),
        tags=str(form.get("tags") or "") or None,
        keys=str(form.get("keys") or "") or None,
    )
    async with board.producer() as producer:
        result = await producer.send(msg)
    sent = {
        "status": result.status.name,
        "msg_id": result.msg_id,
        "queue": f"{result.message_queue.broker_name}:{result.message_queue.queue_id}",
        "offset": result.queue_offset,
    }
    return board.render("topic.html", sent=sent, **await _topic_context(board, name))


async def groups(board: Dashboard, request: Request) -> Response:
    rows = []
    for name in sorted(await board.admin.fetch_all_topic_list()):
        if not is_retry_topic(name):
            continue
        group_name = name[len(RETRY_GROUP_TOPIC_PREFIX) :]
        try:
            stats = await board.admin.examine_consume_stats(group_name)
            diff, tps = stats.compute_total_diff(), stats.consume_tps
        except ClientError:
            diff, tps = None, None
        try:
            conn = await board.admin.examine_consumer_connection_info(group_name)
            clients = len(conn.connection_set)
        except ConsumerNotOnlineError:
            clients = 0
        rows.append({"name": group_name, "diff": diff, "tps": tps, "clients": clients})
    return board.render("groups.html", page="groups", groups=rows)


async def _group_context(board: Dashboard, name: str) -> dict[str, Any]:
    admin = board.admin
    queues: list[dict[str, Any]]
    try:
        stats = await admin.examine_consume_stats(name)
        queues = [
            {
                "topic": mq.topic,
                "broker": mq.broker_name,
                "qid": mq.queue_id,
                "broker_offset": w.broker_offset,
                "consumer_offset": w.consumer_offset,
                "diff": w.broker_offset - w.consumer_offset,
                "last": fmt_ms(w.last_timestamp),
            }
            for mq, w in sorted(
                stats.offset_table.items(),
                key=lambda kv: (kv[0].topic, kv[0].broker_name, kv[0].queue_id),
            )
        ]
        total = stats.compute_total_diff()
    except ClientError:
        queues, total = [], 0
    try:
        conn = await admin.examine_consumer_connection_info(name)
        clients = [
            {"id": c.client_id, "addr": c.client_addr, "language": c.language, "version": c.version}
            for c in conn.connection_set
        ]
        subscriptions = sorted((t, s.sub_string) for t, s in conn.subscription_table.items())
    except ConsumerNotOnlineError:
        clients, subscriptions = [], []
    dlq: list[dict[str, Any]] = []
    try:
        found = await admin.messages_of_topic(dlq_topic(name), None, None, MESSAGE_LIMIT)
        dlq = [message_row(m) for m in found]
    except RocketQError:
        pass  # no DLQ topic: nothing ever failed for good
    topics = sorted({q["topic"] for q in queues if not is_retry_topic(q["topic"])})
    return {
        "page": "groups",
        "name": name,
        "queues": queues,
        "total": total,
        "clients": clients,
        "subscriptions": subscriptions,
        "dlq": dlq,
        "topics": topics,
    }


async def group(board: Dashboard, request: Request) -> Response:
    name = request.query_params.get("name", "")
    return board.render("group.html", **await _group_context(board, name))


async def group_reset(board: Dashboard, request: Request) -> Response:
    form = await request.form()
    name, topic_name = str(form.get("group", "")), str(form.get("topic", ""))
    when = parse_time(str(form.get("time", "")))
    offsets = await board.admin.reset_offset_by_timestamp(
        topic_name, name, -1 if when is None else when
    )
    reset = [
        {"queue": f"{mq.broker_name}:{mq.queue_id}", "offset": off} for mq, off in offsets.items()
    ]
    return board.render("group.html", reset=reset, **await _group_context(board, name))


async def group_resend(board: Dashboard, request: Request) -> Response:
    """Send a copy of a DLQ message back to the topic it first failed on (its RETRY_TOPIC)."""
    form = await request.form()
    name = str(form.get("group", ""))
    original = await board.admin.view_message(str(form.get("offset_id", "")))
    target = original.properties.get(mc.PROPERTY_RETRY_TOPIC) or str(form.get("topic", ""))
    if not target:
        raise ValueError("the DLQ message names no topic to resend to")
    msg = Message(target, original.body, tags=original.tags, keys=original.keys or None)
    async with board.producer() as producer:
        result = await producer.send(msg)
    resent = {"topic": target, "msg_id": result.msg_id, "status": result.status.name}
    return board.render("group.html", resent=resent, **await _group_context(board, name))


async def messages(board: Dashboard, request: Request) -> Response:
    q = request.query_params
    mode = q.get("mode", "")
    found: list[dict[str, Any]] = []
    if mode == "topic" and q.get("topic"):
        begin, end = parse_time(q.get("begin")), parse_time(q.get("end"))
        msgs = await board.admin.messages_of_topic(q["topic"], begin, end, MESSAGE_LIMIT)
        found = [message_row(m) for m in msgs]
    elif mode == "key" and q.get("topic") and q.get("key"):
        result = await board.admin.query_message(q["topic"], q["key"], MESSAGE_LIMIT)
        found = [message_row(m) for m in result.message_list]
    elif mode == "id" and q.get("id"):
        found = [message_row(await board.admin.view_message(q["id"], q.get("topic") or None))]
    return board.render("messages.html", page="messages", found=found, q=dict(q), mode=mode)


async def message(board: Dashboard, request: Request) -> Response:
    q = request.query_params
    msg = await board.admin.view_message(q.get("id", ""), q.get("topic") or None)
    traces, trace_notice = await message_trace(board.admin, msg.client_msg_id)
    return board.render(
        "message.html",
        page="messages",
        m=message_row(msg),
        traces=traces,
        trace_notice=trace_notice,
    )
