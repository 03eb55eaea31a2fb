"""Held pulls and parked POPs woken by the direct dispatch (reput_run.c's ``dispatch_direct``
returning the run's arrivals, ``store.dispatch_arrivals``) against the Python round
(``ROCKETQ_NATIVE=0``): a real broker's held pulls and parked POPs with TAG and SQL92 filters
on two queues, woken by sends, are the same on both paths, the pulls answered with the same
messages, and on the C path the arrivals came from the direct run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.pop.pop_long_polling import PollingResult, PopRequest
from rocketq.broker.property_filter import message_filter_of
from rocketq.common import native_record
from rocketq.common.message_decoder import decode_messages
from rocketq.common.pull_sys_flag import build_sys_flag
from rocketq.remoting import native_frames
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.codec import decode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.subscription import build_subscription_data
from rocketq.response_code import ResponseCode
from rocketq.store.message_store import MessageStore
from rocketq.testing.broker import run_broker
from rocketq.testing.wait import until
from rocketq.testing.wire import create_topic, pull_request, send_request
from tests.broker.raw_wire import Wire

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
]

WAIT_S = 10.0
#: a woken pull's answer: code, nextBeginOffset, its messages' (queue offset, body, property a)
Answer = tuple[int, str, list[tuple[int, bytes, str | None]]]
HELD = build_sys_flag(commit_offset=False, suspend=True, subscription=True)
#: name -> (queue id, expression, expression type)
PULLS = {
    "all0": (0, "*", "TAG"),
    "tagA": (0, "A", "TAG"),
    "tagB": (0, "B", "TAG"),
    "sql1": (0, "a = '1'", "SQL92"),
    "sql2": (0, "a = '2' AND b IS NULL", "SQL92"),
    "all1": (1, "*", "TAG"),
}
#: parked POPs: name -> (queue id, -1 any, expression, expression type)
POPS = {
    "popAll0": (0, "*", "TAG"),
    "popTagB": (0, "B", "TAG"),
    "popSql1": (-1, "a = '1'", "SQL92"),
    "popAll1": (1, "*", "TAG"),
}
#: each send (queue id, tags, properties) and the pulls and POPs it wakes, in order
SENDS = [
    ((0, "A", {"a": "1"}), {"all0", "tagA", "sql1"}, {"popAll0", "popSql1"}),
    ((0, "B", {"a": "2", "b": "x"}), {"tagB"}, {"popTagB"}),
    ((0, "B", {"a": "2"}), {"sql2"}, set()),
    ((1, "C", {}), {"all1"}, {"popAll1"}),
]


def held_pull(name: str, opaque: int) -> RemotingCommand:
    queue_id, expression, kind = PULLS[name]
    cmd = pull_request("G", "T", queue_id, 0, expression=expression, sys_flag=HELD)
    cmd.ext_fields["expressionType"] = kind
    cmd.opaque = opaque
    return cmd


def park_pops(broker: BrokerController, channel: RemotingChannel, woken: list[str]) -> None:
    """Park :data:`POPS` on the broker's POP long polling; each appends its name when woken."""
    for name, (queue_id, expression, kind) in POPS.items():
        message_filter = message_filter_of(build_subscription_data("T", expression, 0, kind))

        async def wakeup(name: str = name) -> None:
            woken.append(name)

        request = PopRequest(
            channel=channel,
            topic="T",
            group=f"PG-{name}",
            queue_id=queue_id,
            timeout_ms=60_000,
            wakeup=wakeup,
            matches_tags_code=message_filter.is_matched_by_consume_queue,
            matches_properties=message_filter.is_matched_by_properties,
        )
        assert broker.pop_service.long_polling.polling(request) is PollingResult.POLLING_SUC


async def woken_by_sends(
    tmp_path: Path, native: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[dict[str, Answer]], list[set[str]], list[tuple[Any, ...]]]:
    """Each send's woken pulls (name -> answer code, nextBeginOffset, messages) and woken
    POPs, and the direct runs' arrivals."""
    native_frames.use(native)
    native_record.use(native)
    direct_arrivals: list[tuple[Any, ...]] = []
    dispatch_direct = MessageStore.dispatch_direct

    def recorded(self: MessageStore, offset: int, end: int, arrivals: Any = None) -> Any:
        result = dispatch_direct(self, offset, end, arrivals)
        direct_arrivals.extend(arrivals or ())
        return result

    monkeypatch.setattr(MessageStore, "dispatch_direct", recorded)
    woken: list[dict[str, Answer]] = []
    pops_woken: list[str] = []
    pops_each: list[set[str]] = []
    async with run_broker(tmp_path, enable_property_filter=True) as broker:
        consumer = Wire(*await asyncio.open_connection(*broker.broker_addr.split(":")))
        producer = Wire(*await asyncio.open_connection(*broker.broker_addr.split(":")))
        try:
            await create_topic([broker.broker_addr], "T", 2)
            # a first message a queue (a new queue's first unit is the Python round's)
            for queue_id in (0, 1):
                sent = send_request("T", b"first", queue_id=queue_id)
                assert decode(await producer.call(sent)).code == ResponseCode.SUCCESS
            direct_arrivals.clear()
            hold = broker.pull_request_hold_service
            opaques = {name: 100 + i for i, name in enumerate(PULLS)}
            for name, opaque in opaques.items():
                cmd = held_pull(name, opaque)
                cmd.ext_fields["queueOffset"] = "1"
                consumer.write(cmd)
            assert await until(lambda: hold.held_count == len(PULLS), WAIT_S)
            park_pops(broker, hold.held_pulls()[0].channel, pops_woken)
            left, pops_seen = len(PULLS), 0
            for i, ((queue_id, tags, props), expected, pops) in enumerate(SENDS):
                sent = send_request("T", b"m%d" % i, tags=tags, extra=props, queue_id=queue_id)
                assert decode(await producer.call(sent)).code == ResponseCode.SUCCESS
                left -= len(expected)
                assert await until(lambda left=left: hold.held_count == left, WAIT_S)
                held = {p.request.opaque for p in hold.held_pulls()}
                answers = {}
                for name, opaque in opaques.items():
                    if opaque in held or any(name in w for w in woken):
                        continue
                    answer = decode(await consumer.frame_of(opaque))
                    messages = decode_messages(answer.body or b"")
                    answers[name] = (
                        answer.code,
                        answer.ext_fields["nextBeginOffset"],
                        [(m.queue_offset, m.body, m.properties.get("a")) for m in messages],
                    )
                woken.append(answers)
                pops_seen += len(pops)
                assert await until(lambda n=pops_seen: len(pops_woken) >= n, WAIT_S)
                pops_each.append(set(pops_woken[pops_seen - len(pops) :]))
        finally:
            consumer.writer.close()
            producer.writer.close()
    assert len(pops_woken) == len(POPS)  # none woken twice or by a message it filters out
    return woken, pops_each, direct_arrivals


async def test_held_pulls_are_woken_alike_by_the_direct_run_and_the_python_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled, compiled_pops, arrivals = await woken_by_sends(tmp_path / "c", True, monkeypatch)
    python, python_pops, none = await woken_by_sends(tmp_path / "python", False, monkeypatch)
    assert [set(w) for w in python] == [expected for _send, expected, _pops in SENDS]
    assert python_pops == [pops for _send, _expected, pops in SENDS]
    assert compiled_pops == python_pops
    for i, answers in enumerate(python):  # each woken pull found its send's message
        for code, _next, messages in answers.values():
            assert code == ResponseCode.SUCCESS
            assert b"m%d" % i in [body for _offset, body, _a in messages]
    assert compiled == python  # the same pulls, answered with the same bytes of messages
    assert none == []  # the Python round took every record there
    # every send's record was dispatched by the direct run, which returned its arrival
    assert [a[:3] for a in arrivals] == [("T", 0, 1), ("T", 0, 2), ("T", 0, 3), ("T", 1, 1)]
