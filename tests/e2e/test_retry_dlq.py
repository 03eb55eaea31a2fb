"""Retry and dead letters end to end: a consumer that keeps failing a message gets it again
through ``%RETRY%<group>`` at delay levels 3, 4, ..., then the message lands in
``%DLQ%<group>`` (created on demand, perm read+write, one queue) with its original properties.
The broker runs with ``messageDelayLevel`` shortened to 1 s per level (broker.conf key)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.config import BrokerConfig
from rocketq.broker.controller import BrokerController
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.common.topic import SCHEDULE_TOPIC
from rocketq.common.topic_config import TopicConfig
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until

TOPIC = "Payments"
GROUP = "cg-payments"
DELAY_S = 1.0
# a stock broker.conf with the delay levels shortened to a second each
BROKER_CONF = "\n".join(
    [
        "brokerClusterName=DefaultCluster",
        "brokerName=broker-a",
        "messageDelayLevel=" + " ".join(["1s"] * 18),
        *(f"{k}={v}" for k, v in small_store_properties().items()),
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


async def test_old_clients_get_the_groups_retry_max_times_and_direct_retry_sends_too(
    tmp_path: Path,
) -> None:
    """A send-back without maxReconsumeTimes (pre-3.4.9 clients) uses the group's
    retryMaxTimes; a plain send to ``%RETRY%<group>`` past it (the Java client's fallback when
    the send-back fails) is diverted to the DLQ as well."""
    from rocketq.broker.subscription_group import SubscriptionGroupConfig
    from rocketq.remoting.client import RemotingClient
    from rocketq.remoting.protocol.codes import RequestCode
    from rocketq.remoting.protocol.command import RemotingCommand
    from rocketq.remoting.protocol.headers import ConsumerSendMsgBackRequestHeader
    from rocketq.response_code import ResponseCode
    from rocketq.testing.wire import send_request

    conf = tmp_path / "broker.conf"
    conf.write_text(BROKER_CONF)
    group = "cg-old"
    async with (
        run_broker(tmp_path / "store", config=BrokerConfig.from_file(conf)) as broker,
        RemotingClient() as client,
    ):
        broker.subscription_group_manager.update_subscription_group_config(
            SubscriptionGroupConfig(group_name=group, retry_max_times=1)
        )
        addr = broker.broker_addr

        async def invoke(request: RemotingCommand) -> RemotingCommand:
            response = await client.invoke(addr, request, 10)
            assert response.code == ResponseCode.SUCCESS, response.remark
            return response

        def send_back(offset: int) -> RemotingCommand:
            header = ConsumerSendMsgBackRequestHeader(offset=offset, group=group, delay_level=0)
            request = RemotingCommand.create_request(
                RequestCode.CONSUMER_SEND_MSG_BACK, header.to_ext_fields()
            )
            request.version = 0  # an old client: the header has no maxReconsumeTimes
            return request

        await invoke(send_request(TOPIC, b"old", extra={"cur": "USD"}))
        retry = f"%RETRY%{group}"
        await invoke(send_back(0))  # reconsumed 0 < 1: retried through level 3
        assert await until(lambda: broker.message_store.get_max_offset_in_queue(retry, 0) == 1, 20)
        retried = decode_message(
            broker.message_store.get_message("t", retry, 0, 0, 1).message_buffers[0]
        )
        assert retried.reconsume_times == 1
        await invoke(send_back(retried.commitlog_offset))  # reconsumed 1 >= 1: dead letter
        assert await until(lambda: len(dlq_records(broker, group)) == 1, 10)
        direct = send_request(retry, b"direct", extra={"cur": "GBP"})
        direct.ext_fields["reconsumeTimes"] = "5"
        await invoke(direct)
        assert await until(lambda: len(dlq_records(broker, group)) == 2, 10)
        dead = dlq_records(broker, group)
    assert [m.body for m in dead] == [b"old", b"direct"]
    assert dead[0].properties["cur"] == "USD"
    assert dead[0].properties["RETRY_TOPIC"] == TOPIC
    assert dead[1].properties["cur"] == "GBP"


@pytest.mark.slow
async def test_the_default_is_sixteen_reconsumes_through_delay_levels_3_to_18(
    tmp_path: Path,
) -> None:
    out = await run(tmp_path, max_reconsume_times=-1, expected=17)
    assert [m.reconsume_times for _, m in out["deliveries"]] == list(range(17))
    assert out["schedule_levels"] == dict.fromkeys(range(3, 19), 1)
    [dead] = out["dlq"]
    assert dead.reconsume_times == 17
    assert dead.properties["cur"] == "EUR"
