"""The consumer group pages (rocketmq-dashboard's consumer view): the list (subscription groups
of every master and groups seen through their retry topics, system groups apart); create, edit
and delete a subscription group; a group's per-queue progress, connections (client id,
address, language, version, subscription), reset offset by time, skip accumulated messages
and its dead letter queue with resend."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from rocketq.client import Message
from rocketq.common import message_const as mc
from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX, dlq_topic, is_retry_topic
from rocketq.dashboard.pages import fmt_ms, message_row, parse_time
from rocketq.errors import ClientError, ConsumerNotOnlineError, RocketQError
from rocketq.remoting.protocol import codes
from rocketq.remoting.protocol.bodies import ConsumeType
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard

DLQ_LIMIT = 64
SYSTEM_GROUP_PREFIX = "CID_RMQ_SYS_"
#: MixAll.isPredefinedGroup's groups, besides MixAll.isSysConsumerGroup's CID_RMQ_SYS_ prefix
PREDEFINED_GROUPS = frozenset(
    {
        "TOOLS_CONSUMER",
        "FILTERSRV_CONSUMER",
        "SELF_TEST_C_GROUP",
        "CID_ONS-HTTP-PROXY",
        "CID_ONSAPI_PULL",
        "CID_ONSAPI_PERMISSION",
        "CID_ONSAPI_OWNER",
        "CID_RMQ_SYS_TRANS",
    }
)
#: the form's check boxes and number fields, as SubscriptionGroupConfig names them
FLAGS = ("consume_enable", "consume_message_orderly", "consume_broadcast_enable")
NUMBERS = ("retry_max_times", "retry_queue_nums", "broker_id", "which_broker_when_consume_slowly")


def is_system_group(group: str) -> bool:
    return group.startswith(SYSTEM_GROUP_PREFIX) or group in PREDEFINED_GROUPS


async def _subscription_groups(board: Dashboard) -> dict[str, dict[str, SubscriptionGroupConfig]]:
    """group -> master address -> its subscription group config, over every master."""
    info = await board.admin.examine_broker_cluster_info()
    found: dict[str, dict[str, SubscriptionGroupConfig]] = {}
    for data in info.broker_addr_table.values():
        addr = data.broker_addrs.get(0)
        if addr is None:
            continue
        wrapper = await board.admin.get_all_subscription_group(addr)
        for name, config in wrapper.subscription_group_table.items():
            found.setdefault(name, {})[addr] = config
    return found


async def _group_row(board: Dashboard, name: str) -> dict[str, Any]:
    try:
        stats = await board.admin.examine_consume_stats(name)
        diff, tps = stats.compute_total_diff(), stats.consume_tps
    except RocketQError:
        diff, tps = None, None
    try:
        conn = await board.admin.examine_consumer_connection_info(name)
    except RocketQError:
        return {"name": name, "diff": diff, "tps": tps, "clients": 0, "mode": ""}
    kind = {ConsumeType.CONSUME_PASSIVELY: "PUSH", ConsumeType.CONSUME_ACTIVELY: "PULL"}
    mode = [kind.get(conn.consume_type, "") if conn.consume_type is not None else ""]
    mode.append(conn.message_model.name if conn.message_model is not None else "")
    clients = len(conn.connection_set)
    return {"name": name, "diff": diff, "tps": tps, "clients": clients, "mode": " ".join(mode)}


async def groups(board: Dashboard, request: Request) -> Response:
    if request.method == "POST":
        form = await request.form()
        name = str(form.get("group", "")).strip()
        if not name:
            raise ValueError("name the group")
        masters = await board.admin.master_addrs_of_cluster(str(form.get("cluster") or ""))
        config = _config_from_form(SubscriptionGroupConfig(group_name=name), form)
        for addr in masters.values():
            await board.admin.create_and_update_subscription_group_config(addr, config)
        return RedirectResponse(f"/group?name={name}", status_code=303)
    configs = await _subscription_groups(board)
    names = set(configs)
    names.update(
        t[len(RETRY_GROUP_TOPIC_PREFIX) :]
        for t in await board.admin.fetch_all_topic_list()
        if is_retry_topic(t)
    )
    rows = [await _group_row(board, n) for n in sorted(names) if not is_system_group(n)]
    for row in rows:
        row["flags"] = _flags(next(iter(configs.get(row["name"], {}).values()), None))
    info = await board.admin.examine_broker_cluster_info()
    return board.render(
        "groups.html",
        page="groups",
        groups=rows,
        system_groups=sorted(n for n in names if is_system_group(n)),
        clusters=sorted(info.cluster_addr_table),
        deleted=request.query_params.get("deleted", ""),
    )


def _flags(config: SubscriptionGroupConfig | None) -> str:
    """The subscription group's settings worth a glance in the list."""
    if config is None:
        return "no subscription group"
    flags = [] if config.consume_enable else ["consume disabled"]
    flags += ["orderly"] if config.orderly else []
    return ", ".join([*flags, f"{config.retry_max_times} retries"])


def _config_from_form(base: SubscriptionGroupConfig, form: Any) -> SubscriptionGroupConfig:
    changes: dict[str, Any] = {f: form.get(f) == "on" for f in FLAGS}
    for name in NUMBERS:
        text = str(form.get(name) or getattr(base, name)).strip()
        if not text.lstrip("-").isdigit():
            raise ValueError(f"{name} must be a whole number, not {text!r}")
        changes[name] = int(text)
    return dataclasses.replace(base, attributes=None, **changes)


async def _progress(board: Dashboard, name: str) -> tuple[list[dict[str, Any]], int]:
    try:
        stats = await board.admin.examine_consume_stats(name)
    except RocketQError:  # no offset committed yet, or no retry topic (no consumer came yet)
        return [], 0
    rows = [
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
    return rows, stats.compute_total_diff()


async def _connections(board: Dashboard, name: str) -> dict[str, Any]:
    try:
        conn = await board.admin.examine_consumer_connection_info(name)
    except ConsumerNotOnlineError:
        return {"clients": [], "subscriptions": [], "mode": ""}
    subscriptions = sorted(
        (t, f"{s.expression_type} {s.sub_string}") for t, s in conn.subscription_table.items()
    )
    text = "; ".join(f"{t}: {e}" for t, e in subscriptions if not is_retry_topic(t))
    clients = [
        {
            "id": c.client_id,
            "addr": c.client_addr,
            "language": c.language,
            "version": codes.version_desc(c.version),
            "subscription": text,
        }
        for c in sorted(conn.connection_set, key=lambda c: c.client_id)
    ]
    parts = (conn.consume_type, conn.message_model, conn.consume_from_where)
    mode = ", ".join(p.name for p in parts if p is not None)
    return {"clients": clients, "subscriptions": subscriptions, "mode": mode}


async def _group_context(board: Dashboard, name: str) -> dict[str, Any]:
    queues, total = await _progress(board, name)
    dlq: list[dict[str, Any]] = []
    try:
        found = await board.admin.messages_of_topic(dlq_topic(name), None, None, DLQ_LIMIT)
        dlq = [message_row(m) for m in found]
    except RocketQError:
        pass  # no DLQ topic: nothing ever failed for good
    configs = (await _subscription_groups(board)).get(name, {})
    subscribed = {q["topic"] for q in queues}
    connections = await _connections(board, name)
    subscribed.update(t for t, _ in connections["subscriptions"])
    return {
        "page": "groups",
        "name": name,
        "queues": queues,
        "total": total,
        "dlq": dlq,
        "topics": sorted(t for t in subscribed if not is_retry_topic(t)),
        "config": next(iter(configs.values()), None),
        "config_brokers": sorted(configs),
        **connections,
    }


async def group(board: Dashboard, request: Request) -> Response:
    name = request.query_params.get("name", "")
    return board.render("group.html", **await _group_context(board, name))


async def group_update(board: Dashboard, request: Request) -> Response:
    """updateSubGroup on every master that has the group, from the edit form."""
    form = await request.form()
    name = str(form.get("group", ""))
    configs = (await _subscription_groups(board)).get(name)
    if not configs:
        raise ClientError(f"no broker has a subscription group {name}")
    for addr, config in configs.items():
        changed = _config_from_form(config, form)
        await board.admin.create_and_update_subscription_group_config(addr, changed)
    updated = "saved on " + ", ".join(sorted(configs))
    return board.render("group.html", updated=updated, **await _group_context(board, name))


async def group_delete(board: Dashboard, request: Request) -> Response:
    """GET: the confirm page (changes nothing); POST: deleteSubGroup on every master that has
    it, and its committed offsets too when asked (``remove_offset``)."""
    if request.method == "GET":
        name = request.query_params.get("name", "")
        return board.render(
            "confirm.html",
            page="groups",
            title=f"Delete consumer group {name}?",
            action="/group/delete",
            fields={"group": name},
            what=(
                f"The subscription group {name} is removed from every broker that has it; "
                "a consumer of it that is still running creates it again (autoCreate"
                "SubscriptionGroup)."
            ),
            remove_offset=True,
            cancel=f"/group?name={name}",
        )
    form = await request.form()
    name = str(form.get("group", ""))
    configs = (await _subscription_groups(board)).get(name)
    if not configs:
        raise ClientError(f"no broker has a subscription group {name}")
    remove_offset = form.get("remove_offset") == "on"
    for addr in configs:
        await board.admin.delete_subscription_group(addr, name, remove_offset=remove_offset)
    return RedirectResponse(f"/groups?deleted={name}", status_code=303)


async def group_reset(board: Dashboard, request: Request) -> Response:
    """resetOffsetByTime for one topic; "skip accumulated" (``skip`` set) moves every topic of
    the group to its end (rocketmq-dashboard's skipAccumulate: timestamp -1)."""
    form = await request.form()
    name = str(form.get("group", ""))
    skip = form.get("skip") == "on"
    topics = (await _group_context(board, name))["topics"] if skip else [str(form.get("topic"))]
    when = None if skip else parse_time(str(form.get("time", "")))
    reset: list[dict[str, Any]] = []
    for topic_name in topics:
        offsets = await board.admin.reset_offset_by_timestamp(
            topic_name, name, -1 if when is None else when
        )
        reset.extend(
            {"queue": f"{mq.topic}:{mq.broker_name}:{mq.queue_id}", "offset": off}
            for mq, off in offsets.items()
        )
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
