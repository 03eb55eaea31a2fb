"""Timer messages end to end (RocketMQ 5's TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS):
our producer sends them, a push consumer receives each once, never before its time and late
by at most the precision plus a margin; a recall before the time keeps a message from ever
arriving, one after it is refused; bad timer input gets RocketMQ's codes and remarks; a 4.x
delay level still works beside the wheel. The broker loads a stock broker.conf with the timer
keys in RocketMQ's spelling (100 ms precision, 60 s max delay)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from rocketq.broker.config import BrokerConfig
from rocketq.broker.controller import BrokerController
from rocketq.broker.metrics import BrokerMetricsCollector
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.recall_message_handle import decode_handle
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import BrokerResponseError
from rocketq.namesrv.server import NamesrvController
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, collecting_consumer
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until

pytestmark = pytest.mark.e2e

TOPIC = "TimerTopic"
PRECISION_MS = 100
MARGIN_MS = 900  # the consumer's pull and the test's own scheduling on a loaded machine


def broker_conf(tmp: Path, **more: str) -> BrokerConfig:
    lines = [
        "brokerClusterName=DefaultCluster",
        "brokerName=broker-a",
        f"timerPrecisionMs={PRECISION_MS}",
        "timerMaxDelaySec=60",
        "timerFlushIntervalMs=200",
        *(f"{k}={v}" for k, v in {**small_store_properties(), **more}.items()),
    ]
    conf = tmp / "broker.conf"
    conf.write_text("\n".join(lines))
    return BrokerConfig.from_file(conf)


@asynccontextmanager
async def timer_cluster(
    tmp: Path, **more: str
) -> AsyncIterator[tuple[NamesrvController, BrokerController]]:
    async with (
        run_namesrv() as ns,
        run_broker(tmp / "store", namesrv_addr=ns.addr, config=broker_conf(tmp, **more)) as b,
    ):
        b.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=TOPIC, read_queue_nums=2, write_queue_nums=2)
        )
        await b.register_broker_all()
        yield ns, b


def stamping_consumer(
    group: str, namesrv_addr: str
) -> tuple[PushConsumer, list[tuple[float, MessageExt]]]:
    """A push consumer of TOPIC that keeps (receipt epoch ms, message) of everything."""
    got: list[tuple[float, MessageExt]] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend((time.time() * 1000, m) for m in msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        group,
        namesrv_addr=namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
    )
    consumer.subscribe(TOPIC, "*")
    consumer.register_message_listener(listener)
    return consumer, got


def receipt_ms(got: list[tuple[float, MessageExt]], body: bytes) -> list[float]:
    return [at for at, m in got if m.body == body]


async def test_timers_arrive_once_never_early_and_within_the_precision(tmp_path: Path) -> None:
    async with timer_cluster(tmp_path) as (ns, broker):
        consumer, got = stamping_consumer("cg-timer", ns.addr)
        await consumer.start()
        due: dict[bytes, int] = {}
        async with Producer("pg-timer", namesrv_addr=ns.addr, **FAST_CLIENT) as producer:
            now = int(time.time() * 1000)
            for i, delay_ms in enumerate((1000, 1500, 2000, 2500, 3000)):
                msg = Message(TOPIC, f"at-{i}".encode())
                msg.deliver_time_ms = now + delay_ms
                due[msg.body] = now + delay_ms
                result = await producer.send(msg)
                assert result.recall_handle is not None
                assert decode_handle(result.recall_handle).topic == TOPIC
            by_delay = Message(TOPIC, b"delay-ms")
            by_delay.set_delay_time_ms(1200)
            due[b"delay-ms"] = int(time.time() * 1000) + 1200
            await producer.send(by_delay)
            by_sec = Message(TOPIC, b"delay-sec")
            by_sec.set_delay_time_sec(1)
            due[b"delay-sec"] = int(time.time() * 1000) + 1000
            await producer.send(by_sec)
            level = Message(TOPIC, b"level-1")
            level.delay_time_level = 1  # 4.x: 1 s beside the wheel
            await producer.send(level)
            assert await until(lambda: len(got) >= len(due) + 1, 20)
        await consumer.shutdown()
        samples = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in BrokerMetricsCollector(broker).collect()
            for s in family.samples
        }
    for body, due_ms in due.items():
        times = receipt_ms(got, body)
        assert len(times) == 1, (body, times)
        assert times[0] >= due_ms, (body, times[0] - due_ms)  # never early
        assert times[0] - due_ms <= PRECISION_MS + MARGIN_MS, (body, times[0] - due_ms)
    (arrived,) = [m for _, m in got if m.body == b"at-0"]
    assert arrived.properties[mc.PROPERTY_TIMER_DEQUEUE_MS]
    assert mc.PROPERTY_REAL_TOPIC not in arrived.properties
    assert len(receipt_ms(got, b"level-1")) == 1
    node = (("cluster", "DefaultCluster"), ("node_id", "broker-a"), ("node_type", "broker"))
    enq = samples[("rocketmq_timer_enqueue_total", (*node, ("topic", TOPIC)))]
    assert enq == len(due)
    assert samples[("rocketmq_timer_dequeue_lag", node)] == 0
    assert ("rocketmq_timing_messages", (*node, ("topic", TOPIC))) not in samples  # none left


async def test_recall_before_the_time_keeps_it_away_and_after_is_refused(tmp_path: Path) -> None:
    async with timer_cluster(tmp_path) as (ns, _broker):
        consumer, got = collecting_consumer("cg-recall", ns.addr, TOPIC)
        await consumer.start()
        async with Producer("pg-recall", namesrv_addr=ns.addr, **FAST_CLIENT) as producer:
            recalled = Message(TOPIC, b"recalled")
            recalled.set_delay_time_ms(1500)
            kept = Message(TOPIC, b"kept")
            kept.set_delay_time_ms(2000)
            r1 = await producer.send(recalled)
            r2 = await producer.send(kept)
            assert r1.recall_handle is not None
            assert r2.recall_handle is not None
            assert await producer.recall_message(TOPIC, r1.recall_handle) == r1.msg_id
            assert await until(lambda: any(m.body == b"kept" for m in got), 15)
            with pytest.raises(BrokerResponseError) as refused:
                await producer.recall_message(TOPIC, r2.recall_handle)
            assert refused.value.response_code == ResponseCode.ILLEGAL_OPERATION
            assert "recall failed, timestamp invalid" in str(refused.value)
            with pytest.raises(BrokerResponseError) as other_topic:
                await producer.recall_message("OtherTopic", r2.recall_handle)
            assert other_topic.value.response_code in (
                ResponseCode.TOPIC_NOT_EXIST,
                ResponseCode.ILLEGAL_OPERATION,
            )
        await consumer.shutdown()
    assert [m.body for m in got].count(b"kept") == 1
    assert b"recalled" not in [m.body for m in got]


async def test_bad_timer_input_is_refused_with_rocketmqs_codes_and_remarks(
    tmp_path: Path,
) -> None:
    async with (
        timer_cluster(tmp_path) as (ns, _broker),
        Producer("pg-bad", namesrv_addr=ns.addr, retry_times_when_send_failed=0) as producer,
    ):
        malformed = Message(TOPIC, b"x")
        malformed.put_property(mc.PROPERTY_TIMER_DELIVER_MS, "soon")
        with pytest.raises(BrokerResponseError) as bad:
            await producer.send(malformed)
        assert bad.value.response_code == ResponseCode.MESSAGE_ILLEGAL
        assert "timer message illegal" in str(bad.value)
        too_far = Message(TOPIC, b"x")
        too_far.set_delay_time_sec(61)
        with pytest.raises(BrokerResponseError) as far:
            await producer.send(too_far)
        assert far.value.response_code == ResponseCode.MESSAGE_ILLEGAL
        assert "max delay 60000ms" in str(far.value)
        with pytest.raises(BrokerResponseError) as bad_handle:
            await producer.instance.api.recall_message(
                producer.instance.find_broker_addr("broker-a") or "",
                _recall_header("bm90IGEgaGFuZGxl"),  # "not a handle"
                5,
            )
        assert bad_handle.value.response_code == ResponseCode.ILLEGAL_OPERATION
        assert "recall handle is invalid" in str(bad_handle.value)


def _recall_header(handle: str) -> object:
    from rocketq.remoting.protocol.headers import RecallMessageRequestHeader

    return RecallMessageRequestHeader(topic=TOPIC, recall_handle=handle)


async def test_a_timer_on_a_broker_without_the_wheel_is_refused_naming_the_key(
    tmp_path: Path,
) -> None:
    async with timer_cluster(tmp_path, timerWheelEnable="false") as (ns, broker):
        assert broker.message_store.timer_message_store is None
        async with Producer("pg-off", namesrv_addr=ns.addr, retry_times_when_send_failed=0) as p:
            msg = Message(TOPIC, b"x")
            msg.set_delay_time_sec(1)
            with pytest.raises(BrokerResponseError) as off:
                await p.send(msg)
            assert off.value.response_code == ResponseCode.SYSTEM_ERROR
            assert "timerWheelEnable is false" in str(off.value)
            plain = await p.send(Message(TOPIC, b"plain"))  # other sends are unaffected
            assert plain.recall_handle is None
