"""The messages pages (rocketmq-dashboard's message view): search by topic and time range over
every queue and broker, newest first, paged, with the count found (``message_search``); by
key; by id. A message's page shows its body, properties, trace (``trace_panel``) and whether
each consumer group consumed it (``message_track``), and asks one consumer of a group to
consume it again (CONSUME_MESSAGE_DIRECTLY, rocketmq-dashboard's "Resend Message")."""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from rocketq.dashboard.message_search import PAGE_SIZE, search_topic
from rocketq.dashboard.message_track import message_track_detail
from rocketq.dashboard.pages import message_row, parse_time
from rocketq.dashboard.trace_panel import message_trace
from rocketq.errors import ClientError, RocketQError, describe

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard

#: the most rows a search by key shows (QueryMessage's maxNum)
KEY_LIMIT = 64


async def messages(board: Dashboard, request: Request) -> Response:
    q = request.query_params
    mode = q.get("mode", "")
    context: dict[str, Any] = {"page": "messages", "q": dict(q), "mode": mode, "found": []}
    if mode == "topic" and q.get("topic"):
        context |= await _by_topic(board, dict(q))
    elif mode == "key" and q.get("topic") and q.get("key"):
        result = await board.admin.query_message(q["topic"], q["key"], KEY_LIMIT)
        context["found"] = [message_row(m) for m in result.message_list]
        context["summary"] = f"{len(context['found'])} found with key {q['key']}"
    elif mode == "id" and q.get("id"):
        msg = await board.admin.view_message(q["id"], q.get("topic") or None)
        context["found"] = [message_row(msg)]
    return board.render("messages.html", **context)


async def _by_topic(board: Dashboard, q: dict[str, str]) -> dict[str, Any]:
    back = [c for c in q.get("back", "").split("|") if c] if q.get("back") else []
    result = await search_topic(
        board.admin,
        q["topic"],
        parse_time(q.get("begin")),
        parse_time(q.get("end")),
        q.get("cursor", ""),
        page_number=len(back) + 1,
    )
    keep = {k: q[k] for k in ("mode", "topic", "begin", "end") if q.get(k)}
    links: dict[str, str] = {}
    if result.next_cursor is not None:
        forward = "|".join([*back, result.cursor])
        links["next"] = _link(keep | {"cursor": result.next_cursor, "back": forward})
    if back:
        links["previous"] = _link(keep | {"cursor": back[-1], "back": "|".join(back[:-1])})
    last = result.first + len(result.messages)
    summary = (
        f"{result.total} found; showing {result.first + 1}-{last}, newest first"
        if result.messages
        else f"{result.total} found"
    )
    return {
        "found": [message_row(m) for m in result.messages],
        "summary": summary,
        "links": links,
        "page_size": PAGE_SIZE,
    }


def _link(params: dict[str, str]) -> str:
    return "/messages?" + urllib.parse.urlencode({k: v for k, v in params.items() if v})


async def _message_context(board: Dashboard, msg_id: str, topic: str | None) -> dict[str, Any]:
    msg = await board.admin.view_message(msg_id, topic)
    traces, trace_notice = await message_trace(board.admin, msg.client_msg_id)
    try:
        tracks = await message_track_detail(board.admin, msg)
        track_notice = "" if tracks else "No consumer group subscribes to this topic."
    except RocketQError as exc:
        tracks, track_notice = [], f"Consume status unknown: {describe(exc)}"
    return {
        "page": "messages",
        "m": message_row(msg),
        "traces": traces,
        "trace_notice": trace_notice,
        "tracks": tracks,
        "track_notice": track_notice,
    }


async def message(board: Dashboard, request: Request) -> Response:
    q = request.query_params
    context = await _message_context(board, q.get("id", ""), q.get("topic") or None)
    return board.render("message.html", **context)


async def message_resend(board: Dashboard, request: Request) -> Response:
    """CONSUME_MESSAGE_DIRECTLY on one online consumer of the group (the one chosen, else the
    first that answers, as rocketmq-dashboard's consumeMessageDirectly)."""
    form = await request.form()
    group, msg_id = str(form.get("group", "")), str(form.get("id", ""))
    context = await _message_context(board, msg_id, None)
    track = next((t for t in context["tracks"] if t.consumer_group == group), None)
    chosen = str(form.get("client_id") or "")
    clients = [chosen] if chosen else (track.client_ids if track else [])
    if not clients:
        raise ClientError(f"no consumer of {group} is online to consume the message again")
    topic = context["m"]["topic"]
    failures: list[str] = []
    for client_id in clients:
        try:
            result = await board.admin.consume_message_directly(group, client_id, topic, msg_id)
        except RocketQError as exc:
            failures.append(f"{client_id}: {describe(exc)}")
            continue
        outcome = result.consume_result.value if result.consume_result else "no result"
        resent = {"group": group, "client": client_id, "result": outcome}
        return board.render("message.html", resent=resent | {"remark": result.remark}, **context)
    raise ClientError(f"no consumer of {group} consumed the message again: {'; '.join(failures)}")
