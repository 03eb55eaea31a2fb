"""FIFO (orderly) POP over the wire: a queue's next messages only after its last batch is acked
or expired, an expired batch first again with its count, the offset committed when the batch is
acked, the same attemptId answered with the same messages, reviveQid 999 handles for ack and
change, and the order info surviving a broker restart."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from rocketq.common.extra_info import POP_ORDER_REVIVE_QUEUE
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.remoting.protocol.pop_headers import (
    NotificationRequestHeader,
    NotificationResponseHeader,
)
from rocketq.response_code import ResponseCode
from rocketq.testing import pop as raw
from rocketq.testing.cluster import Cluster, run_cluster
from rocketq.testing.store import small_store_properties

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(30)]

TOPIC = "FifoTopic"
GROUP = "fifo-group"


@asynccontextmanager
async def fifo_cluster(tmp: Path, *, orderly_group: bool = False) -> AsyncIterator[Cluster]:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    async with run_cluster(tmp, store_properties=props, revive_interval_ms=200) as c:
        await c.create_topic(TOPIC, queues=1)
        if orderly_group:
            c.broker.subscription_group_manager.update_subscription_group_config(
                SubscriptionGroupConfig(group_name=GROUP, consume_message_orderly=True)
            )
        yield c


async def send(c: Cluster, *bodies: str) -> None:
    for body in bodies:
        await c.send_raw(TOPIC, body.encode(), queue_id=0)


async def pop(c: Cluster, **options: Any) -> list[raw.Popped]:
    options.setdefault("order", True)
    options.setdefault("invisible_ms", 10_000)
    _, popped = await raw.pop(c.client, c.broker_addr, "broker-a", GROUP, TOPIC, **options)
    return popped


def bodies(popped: list[raw.Popped]) -> list[str]:
    return [p.msg.body.decode() for p in popped]


async def ack(c: Cluster, p: raw.Popped) -> int:
    response = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, p.handle)
    return response.code


async def test_next_batch_of_a_queue_only_after_the_whole_batch_is_acked(tmp_path: Path) -> None:
    async with fifo_cluster(tmp_path) as c:
        await send(c, "m0", "m1", "m2", "m3")
        first = await pop(c, max_nums=2)
        assert bodies(first) == ["m0", "m1"]
        assert {p.extra.revive_qid for p in first} == {POP_ORDER_REVIVE_QUEUE}
        assert c.committed(GROUP, TOPIC) == {0: 0}  # the offset stays at the batch's start
        assert await pop(c, max_nums=2) == []
        assert await ack(c, first[0]) == ResponseCode.SUCCESS
        assert c.committed(GROUP, TOPIC) == {0: 1}
        assert await pop(c, max_nums=2) == []  # m1 still in flight
        assert await ack(c, first[1]) == ResponseCode.SUCCESS
        assert c.committed(GROUP, TOPIC) == {0: 2}
        assert bodies(await pop(c, max_nums=2)) == ["m2", "m3"]


async def test_an_expired_batch_comes_first_again_with_its_count(tmp_path: Path) -> None:
    async with fifo_cluster(tmp_path) as c:
        await send(c, "m0", "m1", "m2")
        first = await pop(c, max_nums=2, invisible_ms=800)
        assert [p.msg.reconsume_times for p in first] == [0, 0]
        # parked while blocked; woken when the batch's invisible time ends
        again = await pop(c, max_nums=3, invisible_ms=800, poll_ms=5000)
        assert bodies(again) == ["m0", "m1", "m2"]
        assert [p.msg.reconsume_times for p in again] == [1, 1, 0]
        third = await pop(c, max_nums=3, invisible_ms=10_000, poll_ms=5000)
        assert [p.msg.reconsume_times for p in third] == [2, 2, 1]
        assert await ack(c, first[0]) == ResponseCode.NO_MESSAGE  # an expired handle
        for p in third:
            assert await ack(c, p) == ResponseCode.SUCCESS
        assert c.committed(GROUP, TOPIC) == {0: 3}


async def test_the_same_attempt_id_gets_the_same_messages_again(tmp_path: Path) -> None:
    async with fifo_cluster(tmp_path) as c:
        await send(c, "m0", "m1")
        first = await pop(c, attempt_id="a1")
        repeat = await pop(c, attempt_id="a1")
        assert bodies(first) == bodies(repeat) == ["m0", "m1"]
        assert [p.msg.reconsume_times for p in repeat] == [0, 0]  # the same attempt
        assert await pop(c, attempt_id="a2") == []
        for p in repeat:
            assert await ack(c, p) == ResponseCode.SUCCESS
        assert c.committed(GROUP, TOPIC) == {0: 2}


async def test_a_change_of_invisible_time_moves_the_block(tmp_path: Path) -> None:
    async with fifo_cluster(tmp_path) as c:
        await send(c, "m0")
        (p,) = await pop(c)
        response, handle = await raw.change_invisible_time(
            c.client, c.broker_addr, GROUP, TOPIC, p.handle, 300
        )
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert handle is not None
        new = raw.Popped(p.msg, handle).extra
        assert (new.revive_qid, new.pop_time) == (POP_ORDER_REVIVE_QUEUE, p.extra.pop_time)
        again = await pop(c, poll_ms=5000)  # unblocked 300 ms from the change
        assert bodies(again) == ["m0"]
        assert again[0].msg.reconsume_times == 1


async def test_a_group_with_consume_message_orderly_pops_fifo(tmp_path: Path) -> None:
    async with fifo_cluster(tmp_path, orderly_group=True) as c:
        await send(c, "m0", "m1")
        first = await pop(c, order=False, max_nums=1)
        assert first[0].extra.revive_qid == POP_ORDER_REVIVE_QUEUE
        assert await pop(c, order=False, max_nums=1) == []


async def test_an_ack_of_an_offset_outside_the_batch_is_illegal(tmp_path: Path) -> None:
    async with fifo_cluster(tmp_path) as c:
        await send(c, "m0", "m1")
        (p,) = await pop(c, max_nums=1)
        e = p.extra
        other = raw.Popped(p.msg, p.handle.rsplit(" ", 1)[0] + f" {e.queue_offset + 1}")
        assert await ack(c, other) == ResponseCode.MESSAGE_ILLEGAL


async def test_the_order_info_survives_a_broker_restart(tmp_path: Path) -> None:
    async with fifo_cluster(tmp_path) as c:
        await send(c, "m0", "m1")
        first = await pop(c, max_nums=1)
    assert (tmp_path / "store" / "config" / "consumerOrderInfo.json").exists()
    async with fifo_cluster(tmp_path) as c:
        assert await pop(c, max_nums=1) == []  # still blocked
        assert await ack(c, first[0]) == ResponseCode.SUCCESS
        assert bodies(await pop(c, max_nums=1)) == ["m1"]


async def test_a_notification_does_not_count_a_blocked_fifo_queue(tmp_path: Path) -> None:
    async with fifo_cluster(tmp_path) as c:

        async def has_msg(order: bool) -> bool:
            header = NotificationRequestHeader(
                consumer_group=GROUP, topic=TOPIC, queue_id=-1, poll_time=0,
                born_time=int(time.time() * 1000), order=order,
            )  # fmt: skip
            request = RemotingCommand.create_request(
                RequestCode.NOTIFICATION, header.to_ext_fields()
            )
            response = await c.client.invoke(c.broker_addr, request, 10.0)
            assert response.code == ResponseCode.SUCCESS, response.remark
            return NotificationResponseHeader.from_ext_fields(response.ext_fields).has_msg

        await send(c, "m0", "m1")
        (p,) = await pop(c, max_nums=1)
        assert await has_msg(order=False) is True  # m1 lies past the offset
        assert await has_msg(order=True) is False  # but the FIFO queue is blocked
        assert await ack(c, p) == ResponseCode.SUCCESS
        assert await has_msg(order=True) is True
