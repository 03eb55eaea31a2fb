"""Retry and dead letters end to end: a consumer that keeps failing a message gets it again
through ``%RETRY%<group>`` at delay levels 3, 4, ..., then the message lands in
``%DLQ%<group>`` (created on demand, perm read+write, one queue) with its original properties.
The broker runs with ``messageDelayLevel`` shortened to 1 s per level (broker.conf key)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from rocketq.broker.config import BrokerConfig
from rocketq.broker.controller import BrokerController
from rocketq.broker.topic_config import SCHEDULE_TOPIC, TopicConfig
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.wait import until
from tests.client.conftest import FAST_CLIENT, FAST_CONSUMER
from tests.e2e.conftest import SMALL_STORE

TOPIC = "Payments"
GROUP = "cg-payments"
DELAY_S = 1.0
# a stock broker.conf with the delay levels shortened to a second each
BROKER_CONF = "\n".join(
    [
        "brokerClusterName=DefaultCluster",
        "brokerName=broker-a",
        "messageDelayLevel=" + " ".join(["1s"] * 18),
        *(f"{k}={v}" for k, v in SMALL_STORE.items()),
    ]
)


class AlwaysFails:
    def __init__(self) -> None:
        self.deliveries: list[tuple[float, MessageExt]] = []

    def __call__(self, msgs: list[MessageExt]) -> ConsumeStatus:
        self.deliveries.extend((time.monotonic(), m) for m in msgs)
        return ConsumeStatus.RECONSUME_LATER


def dlq_records(broker: BrokerController, group: str) -> list[MessageExt]:
    result = broker.message_store.get_message("t", f"%DLQ%{group}", 0, 0, 100)
    return [decode_message(b) for b in result.message_buffers]


async def run(tmp_path: Path, max_reconsume_times: int, expected: int) -> dict[str, Any]:
    conf = tmp_path / "broker.conf"
    conf.write_text(BROKER_CONF)
    failing = AlwaysFails()
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store", namesrv_addr=ns.addr, config=BrokerConfig.from_file(conf)
        ) as broker,
    ):
        broker.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=TOPIC, read_queue_nums=1, write_queue_nums=1)
        )
        await broker.register_broker_all()
        consumer = PushConsumer(
            GROUP,
            namesrv_addr=ns.addr,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
            max_reconsume_times=max_reconsume_times,
            **FAST_CONSUMER,
        )
        consumer.subscribe(TOPIC, "*")
        consumer.register_message_listener(failing)
        await consumer.start()
        try:
            async with Producer("pg", namesrv_addr=ns.addr, **FAST_CLIENT) as producer:
                msg = Message(
                    TOPIC, b"charge 42", tags="TagPay", keys=["order-7"], properties={"cur": "EUR"}
                )
                sent = await producer.send(msg)
            assert await until(lambda: len(dlq_records(broker, GROUP)) == 1, 30 + 3 * expected)
            delivered = len(failing.deliveries)
        finally:
            await consumer.shutdown()
        dlq_config = broker.topic_config_manager.select_topic_config(f"%DLQ%{GROUP}")
        levels = {
            level: broker.message_store.get_max_offset_in_queue(SCHEDULE_TOPIC, level - 1)
            for level in range(1, 19)
        }
        return {
            "schedule_levels": {k: v for k, v in levels.items() if v > 0},
            "sent": sent,
            "deliveries": failing.deliveries[:delivered],
            "dlq": dlq_records(broker, GROUP),
            "dlq_config": dlq_config,
        }


async def test_a_message_failed_every_time_is_retried_then_dead_lettered_with_its_properties(
    tmp_path: Path,
) -> None:
    out = await run(tmp_path, max_reconsume_times=3, expected=4)
    deliveries: list[tuple[float, MessageExt]] = out["deliveries"]
    assert [m.reconsume_times for _, m in deliveries] == [0, 1, 2, 3]
    for (t0, _), (t1, _) in itertools.pairwise(deliveries):
        assert t1 - t0 >= DELAY_S * 0.9  # every retry waited its (shortened) delay level
    for _, m in deliveries:
        assert m.topic == TOPIC  # retries are shown under the original topic
        assert m.body == b"charge 42"
        assert m.properties["cur"] == "EUR"
    assert out["schedule_levels"] == {3: 1, 4: 1, 5: 1}  # levels 3, 4, 5: one retry each
    [dead] = out["dlq"]
    assert dead.topic == f"%DLQ%{GROUP}"
    assert dead.queue_id == 0
    assert dead.body == b"charge 42"
    assert dead.tags == "TagPay"
    assert dead.keys == ["order-7"]
    assert dead.properties["cur"] == "EUR"
    assert dead.properties["RETRY_TOPIC"] == TOPIC
    assert dead.uniq_key == out["sent"].msg_id
    assert "ORIGIN_MESSAGE_ID" in dead.properties
    assert "DELAY" not in dead.properties
    assert dead.reconsume_times == 4
    dlq_config = out["dlq_config"]
    assert dlq_config is not None
    assert dlq_config.perm == 6  # PermName.PERM_READ | PERM_WRITE, as 4.9 creates it
    assert dlq_config.read_queue_nums == 1
    assert dlq_config.write_queue_nums == 1


async def test_max_reconsume_times_zero_dead_letters_after_the_first_failure(
    tmp_path: Path,
) -> None:
    out = await run(tmp_path, max_reconsume_times=0, expected=1)
    assert [m.reconsume_times for _, m in out["deliveries"]] == [0]
    [dead] = out["dlq"]
    assert dead.properties["cur"] == "EUR"
    assert dead.reconsume_times == 1
