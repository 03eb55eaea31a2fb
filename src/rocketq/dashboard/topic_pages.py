"""The topic pages (rocketmq-dashboard's topic view): the list, with retry, DLQ and system
topics in a section of their own; create; a topic's status (per-queue min/max offsets), route,
message type and consumer groups; edit its read/write queue counts and perm on every broker
that serves it; delete (after a confirm page); send a test message."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from rocketq.client import Message
from rocketq.common.topic import REPLY_TOPIC_POSTFIX, is_dlq_topic, is_retry_topic, is_system_topic
from rocketq.common.topic_config import PERM_READ, PERM_WRITE, TopicConfig
from rocketq.dashboard.pages import fmt_ms
from rocketq.errors import ClientError, RocketQError

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard

#: PermName's values a topic can be given (read-only, write-only, read-write)
PERMS = {PERM_READ: "read", PERM_WRITE: "write", PERM_READ | PERM_WRITE: "read-write"}


def topic_kind(topic: str, cluster_and_broker_names: Collection[str] = ()) -> str:
    """retry, dlq, system (TopicValidator.isSystemTopic, and what a broker creates on its own:
    its cluster and broker names, clusterTopicEnable and brokerTopicEnable, and the cluster's
    ``<cluster>_REPLY_TOPIC`` of TopicConfigManager) or normal."""
    if is_retry_topic(topic):
        return "retry"
    if is_dlq_topic(topic):
        return "dlq"
    if is_system_topic(topic) or topic in cluster_and_broker_names:
        return "system"
    return "normal"


def _form_int(form: Any, name: str, default: int) -> int:
    text = str(form.get(name) or default).strip()
    if not text.isdigit():
        raise ValueError(f"{name} must be a whole number, not {text!r}")
    return int(text)


def _form_perm(form: Any) -> int:
    perm = _form_int(form, "perm", PERM_READ | PERM_WRITE)
    if perm not in PERMS:
        raise ValueError(f"perm must be one of {sorted(PERMS)} (PermName), not {perm}")
    return perm


async def topics(board: Dashboard, request: Request) -> Response:
    if request.method == "POST":
        return await _create(board, request)
    info = await board.admin.examine_broker_cluster_info()
    reserved = set(info.cluster_addr_table) | set(info.broker_addr_table)
    reserved.update(f"{c}_{REPLY_TOPIC_POSTFIX}" for c in info.cluster_addr_table)
    rows = [
        {"name": n, "kind": topic_kind(n, reserved)}
        for n in sorted(await board.admin.fetch_all_topic_list())
    ]
    return board.render(
        "topics.html",
        page="topics",
        topics=[r for r in rows if r["kind"] == "normal"],
        system_topics=[r for r in rows if r["kind"] != "normal"],
        clusters=sorted(info.cluster_addr_table),
        perms=PERMS,
        deleted=request.query_params.get("deleted", ""),
    )


async def _create(board: Dashboard, request: Request) -> Response:
    form = await request.form()
    name = str(form.get("topic", "")).strip()
    queues = _form_int(form, "queues", 4)
    config = TopicConfig(
        topic_name=name,
        read_queue_nums=_form_int(form, "read_queues", queues),
        write_queue_nums=_form_int(form, "write_queues", queues),
        perm=_form_perm(form),
    )
    cluster_name = str(form.get("cluster") or "DefaultCluster")
    await board.admin.create_and_update_topic_config_in_cluster(cluster_name, config)
    return RedirectResponse(f"/topic?name={name}", status_code=303)


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
    first = route.queue_datas[0] if route.queue_datas else None
    return {
        "page": "topics",
        "name": name,
        "route": route,
        "queues": queues,
        "groups": groups,
        "types": {b: kind.value if kind else "" for b, kind in types.items()},
        "current": first,
        "perms": PERMS,
        "total": sum(off.max_offset - off.min_offset for off in stats.offset_table.values()),
    }


async def topic(board: Dashboard, request: Request) -> Response:
    name = request.query_params.get("name", "")
    return board.render("topic.html", **await _topic_context(board, name))


async def topic_update(board: Dashboard, request: Request) -> Response:
    """updateTopic on every master serving the topic: new queue counts and perm, the rest of
    each broker's config (order, filter type, attributes) kept."""
    form = await request.form()
    name = str(form.get("topic", ""))
    read_queues, write_queues = (
        _form_int(form, "read_queues", 0),
        _form_int(form, "write_queues", 0),
    )
    if read_queues < 1 or write_queues < 1:
        raise ValueError("a topic needs at least one read queue and one write queue")
    perm = _form_perm(form)
    masters = await board.admin.master_addrs_of_topic(name)
    for addr in masters.values():
        config = await board.admin.examine_topic_config(addr, name) or TopicConfig(topic_name=name)
        changed = dataclasses.replace(
            config,
            read_queue_nums=read_queues,
            write_queue_nums=write_queues,
            perm=perm,
            attributes=None,  # an attribute change, not the stored set: none
        )
        await board.admin.create_and_update_topic_config(addr, changed)
    updated = f"{read_queues} read / {write_queues} write queues, perm {perm} on " + ", ".join(
        sorted(masters)
    )
    return board.render("topic.html", updated=updated, **await _topic_context(board, name))


async def _clusters_of(board: Dashboard, name: str) -> list[str]:
    route = await board.admin.examine_topic_route_info(name)
    brokers = {bd.broker_name for bd in route.broker_datas}
    info = await board.admin.examine_broker_cluster_info()
    return sorted(c for c, names in info.cluster_addr_table.items() if brokers & set(names))


async def topic_delete(board: Dashboard, request: Request) -> Response:
    """GET: the confirm page (changes nothing); POST: deleteTopic in each of its clusters."""
    if request.method == "GET":
        name = request.query_params.get("name", "")
        return board.render(
            "confirm.html",
            page="topics",
            title=f"Delete topic {name}?",
            action="/topic/delete",
            fields={"topic": name},
            what=(
                f"The topic {name} is removed from every broker of "
                f"{', '.join(await _clusters_of(board, name))} and from the name servers; "
                "its messages can no longer be consumed."
            ),
            cancel=f"/topic?name={name}",
        )
    form = await request.form()
    name = str(form.get("topic", ""))
    clusters = await _clusters_of(board, name)
    if not clusters:
        raise ClientError(f"the topic {name} is served by no cluster")
    for cluster_name in clusters:
        await board.admin.delete_topic(name, cluster_name)
    return RedirectResponse(f"/topics?deleted={name}", status_code=303)


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
        "offset_msg_id": result.offset_msg_id,
        "queue": f"{result.message_queue.broker_name}:{result.message_queue.queue_id}",
        "offset": result.queue_offset,
    }
    return board.render("topic.html", sent=sent, **await _topic_context(board, name))
