"""POP consumption over the wire (raw POP_MESSAGE / ACK_MESSAGE / BATCH_ACK_MESSAGE /
CHANGE_MESSAGE_INVISIBLETIME / NOTIFICATION requests as RocketMQ 5's client sends them): an
acked message never comes back, an un-acked one comes back after its invisible time through
the POP retry topic with reconsumeTimes + 1, a change of invisible time issues a new handle
and retires the old, a parked pop is answered when a message arrives, a message delivered
retryMaxTimes + 1 times goes to the DLQ, and bad input gets RocketMQ's codes and remarks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.metrics import BrokerMetricsCollector
from rocketq.common.extra_info import PROPERTY_DLQ_ORIGIN_TOPIC, build_pop_retry_topic
from rocketq.common.message_decoder import decode_message
from rocketq.common.topic import dlq_topic
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
from rocketq.testing.wait import until

pytestmark = pytest.mark.e2e

TOPIC = "PopTopic"
GROUP = "pop-group"
INVISIBLE_MS = 1500


@asynccontextmanager
async def pop_cluster(tmp: Path, **more: Any) -> AsyncIterator[Cluster]:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    async with run_cluster(
        tmp, store_properties=props, revive_interval_ms=200, revive_queue_num=2, **more
    ) as c:
        await c.create_topic(TOPIC, queues=2)
        yield c


async def send(c: Cluster, *bodies: str, tags: str = "A") -> None:
    for body in bodies:
        await c.send_raw(TOPIC, body.encode(), tags=tags)


async def pop(c: Cluster, **options: Any) -> tuple[RemotingCommand, list[raw.Popped]]:
    options.setdefault("invisible_ms", INVISIBLE_MS)
    return await raw.pop(c.client, c.broker_addr, "broker-a", GROUP, TOPIC, **options)


async def pop_until(c: Cluster, count: int, timeout_s: float, **options: Any) -> list[raw.Popped]:
    got: list[raw.Popped] = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        _, popped = await pop(c, poll_ms=500, **options)
        got.extend(popped)
    return got


def bodies(popped: list[raw.Popped]) -> list[str]:
    return sorted(p.msg.body.decode() for p in popped)


async def test_pop_then_ack_is_never_delivered_again(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:
        await send(c, "m0", "m1", "m2")
        response, popped = await pop(c)
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert bodies(popped) == ["m0", "m1", "m2"]
        assert all(p.msg.topic == TOPIC and p.msg.reconsume_times == 0 for p in popped)
        for p in popped:
            ack = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, p.handle)
            assert ack.code == ResponseCode.SUCCESS, ack.remark
        again = await pop_until(c, 1, (INVISIBLE_MS + 2500) / 1000)
        assert again == []


@pytest.mark.parametrize(("v2", "mark"), [(False, "1"), (True, "2")])
async def test_unacked_message_comes_back_with_reconsume_times_plus_one(
    tmp_path: Path, v2: bool, mark: str
) -> None:
    async with pop_cluster(tmp_path, enable_retry_topic_v2=v2) as c:
        await send(c, "lost")
        _, first = await pop(c)
        assert bodies(first) == ["lost"]
        _, hidden = await pop(c)
        assert hidden == []  # invisible for INVISIBLE_MS
        again = await pop_until(c, 1, 8.0)
        assert bodies(again) == ["lost"]
        assert again[0].msg.reconsume_times == 1
        assert again[0].msg.topic == TOPIC
        assert again[0].extra.mark == mark  # from the V1 or V2 retry topic
        assert again[0].msg.uniq_key == first[0].msg.uniq_key
        ack = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, again[0].handle)
        assert ack.code == ResponseCode.SUCCESS, ack.remark
        retry = build_pop_retry_topic(TOPIC, GROUP, v2)
        assert retry == (f"%RETRY%{GROUP}+{TOPIC}" if v2 else f"%RETRY%{GROUP}_{TOPIC}")
        assert c.broker.topic_config_manager.select_topic_config(retry) is not None
        assert await pop_until(c, 1, 3.5) == []
        families = {f.name: f for f in BrokerMetricsCollector(c.broker).collect()}
        retried = families["rocketmq_pop_revive_retry_messages"].samples
        assert [(s.labels["topic"], s.labels["put_status"], s.value) for s in retried] == [
            (TOPIC, "PUT_OK", 1.0)
        ]
        assert "rocketmq_pop_revive_lag" in families
        assert "rocketmq_pop_revive_latency" in families


async def test_change_invisible_time_gives_a_new_handle_and_retires_the_old(
    tmp_path: Path,
) -> None:
    async with pop_cluster(tmp_path) as c:
        await send(c, "slow")
        _, (p,) = await pop(c)
        # long enough that the new handle outlives the checks below on a loaded machine
        response, new = await raw.change_invisible_time(
            c.client, c.broker_addr, GROUP, TOPIC, p.handle, 20_000
        )
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert new is not None
        assert new != p.handle
        stale = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, p.handle)
        assert stale.code == ResponseCode.NO_MESSAGE
        assert stale.remark == "receipt handle is expired"
        assert await pop_until(c, 1, (INVISIBLE_MS + 2000) / 1000) == []  # still hidden
        ok = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, new)
        assert ok.code == ResponseCode.SUCCESS, ok.remark


async def test_batch_ack_acks_every_message_it_names(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:
        await send(c, *(f"b{i}" for i in range(6)))
        popped = await pop_until(c, 6, 5.0)
        assert len(popped) == 6
        handles = [p.handle for p in popped[:4]]
        response = await raw.batch_ack(c.client, c.broker_addr, "broker-a", GROUP, TOPIC, handles)
        assert response.code == ResponseCode.SUCCESS, response.remark
        again = await pop_until(c, 2, 8.0)
        assert bodies(again) == bodies(popped[4:])


async def test_pop_filters_by_tag_and_by_sql92(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path, enable_property_filter=True) as c:
        await send(c, "a1", "a2", tags="A")
        await send(c, "b1", tags="B")
        for body, level in (("s1", "1"), ("s5", "5")):
            await c.send_raw(TOPIC, body.encode(), tags="C", extra={"level": level})
        _, tagged = await pop(c, exp="A", exp_type="TAG")
        assert bodies(tagged) == ["a1", "a2"]
        sql_group = "pop-sql"
        _, by_sql = await raw.pop(
            c.client, c.broker_addr, "broker-a", sql_group, TOPIC, exp="level > 2",
            exp_type="SQL92", invisible_ms=INVISIBLE_MS,
        )  # fmt: skip
        assert bodies(by_sql) == ["s5"]
        _, rest = await pop(c, exp="A", exp_type="TAG")
        assert rest == []  # the group's offsets moved past what did not match


async def test_parked_pop_is_answered_when_a_message_arrives(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:
        # parked three times as long as it is waited for: an answer is the arrival's wake-up
        task = asyncio.create_task(pop(c, poll_ms=60_000))
        await asyncio.sleep(0.3)
        assert not task.done()
        await send(c, "wake")
        response, popped = await asyncio.wait_for(task, 20.0)
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert bodies(popped) == ["wake"]


async def test_polling_timeout_and_polling_full(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path, pop_polling_size=1) as c:
        response, _ = await pop(c, poll_ms=300, queue_id=0)
        assert response.code == ResponseCode.POLLING_TIMEOUT
        parked = asyncio.create_task(pop(c, poll_ms=3000, queue_id=0))
        await asyncio.sleep(0.3)
        full, _ = await pop(c, poll_ms=3000, queue_id=0)
        assert full.code == ResponseCode.POLLING_FULL
        late, _ = await parked
        assert late.code == ResponseCode.POLLING_TIMEOUT


async def test_notification_says_whether_there_is_something_to_pop(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:

        async def notify(poll_ms: int) -> bool:
            header = NotificationRequestHeader(
                consumer_group=GROUP, topic=TOPIC, queue_id=-1, poll_time=poll_ms,
                born_time=int(time.time() * 1000),
            )  # fmt: skip
            request = RemotingCommand.create_request(
                RequestCode.NOTIFICATION, header.to_ext_fields()
            )
            response = await c.client.invoke(c.broker_addr, request, 10.0)
            assert response.code == ResponseCode.SUCCESS, response.remark
            return NotificationResponseHeader.from_ext_fields(response.ext_fields).has_msg

        assert await notify(200) is False
        task = asyncio.create_task(notify(5000))
        await asyncio.sleep(0.3)
        await send(c, "n")
        assert await asyncio.wait_for(task, 5.0) is True


async def test_message_delivered_retry_max_times_plus_one_goes_to_dlq(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:
        c.broker.subscription_group_manager.update_subscription_group_config(
            SubscriptionGroupConfig(group_name=GROUP, retry_max_times=1)
        )
        await send(c, "doomed")
        deliveries = []
        deadline = time.monotonic() + 14.0
        while len(deliveries) < 2 and time.monotonic() < deadline:
            _, popped = await pop(c, poll_ms=500, invisible_ms=1000)
            deliveries.extend(popped)
        assert [p.msg.reconsume_times for p in deliveries] == [0, 1]
        dlq = dlq_topic(GROUP)
        store = c.broker.message_store

        def in_dlq() -> bool:
            return store.get_max_offset_in_queue(dlq, 0) == 1

        assert await until(in_dlq, 6.0)
        result = store.get_message("g", dlq, 0, 0, 1, None)
        msg = decode_message(result.message_buffers[0])
        assert msg.body == b"doomed"
        assert msg.properties[PROPERTY_DLQ_ORIGIN_TOPIC] == TOPIC
        assert msg.properties["DLQ_ORIGIN_MESSAGE_ID"] == deliveries[0].msg.msg_id
        assert await pop_until(c, 1, 2.0) == []


async def test_bad_pop_and_ack_input_get_rocketmq_codes(tmp_path: Path) -> None:
    async with pop_cluster(tmp_path) as c:
        response, _ = await pop(c, max_nums=33)
        assert response.code == ResponseCode.INVALID_PARAMETER
        assert "pop message's num is greater than 32" in (response.remark or "")
        await send(c, "x")
        _, (p,) = await pop(c)
        ok = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, p.handle)
        assert ok.code == ResponseCode.SUCCESS
        header_fields = {
            "consumerGroup": GROUP, "topic": TOPIC, "queueId": "0", "extraInfo": "12 34",
            "offset": "0",
        }  # fmt: skip
        request = RemotingCommand.create_request(RequestCode.ACK_MESSAGE, header_fields)
        malformed = await c.client.invoke(c.broker_addr, request, 5.0)
        assert malformed.code == ResponseCode.SYSTEM_ERROR
        assert malformed.remark == "getInvisibleTime fail, extraInfoStrs length 2"
        expired = p.extra.encode().replace(str(p.extra.pop_time), "1000", 1)
        late = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, expired)
        assert late.code == ResponseCode.NO_MESSAGE
        assert late.remark == "receipt handle is expired"
        changed, new = await raw.change_invisible_time(
            c.client, c.broker_addr, GROUP, TOPIC, expired, 5000
        )
        assert changed.code == ResponseCode.NO_MESSAGE
        assert changed.remark == "receipt handle is expired"
        assert new is None


async def test_pop_is_refused_when_the_timer_wheel_is_off(tmp_path: Path) -> None:
    props = small_store_properties(timerWheelEnable="false")
    async with run_cluster(tmp_path, store_properties=props) as c:
        await c.create_topic(TOPIC, queues=1)
        response, _ = await raw.pop(c.client, c.broker_addr, "broker-a", GROUP, TOPIC)
        assert response.code == ResponseCode.SYSTEM_ERROR
        assert "timerWheelEnable is false" in (response.remark or "")
