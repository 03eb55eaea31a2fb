"""The check-back's timing keys, set in broker.conf by their RocketMQ names, are honoured:
no half is checked before ``transactionTimeOut``, scans are ``transactionCheckInterval``
apart, and after ``transactionCheckMax`` checks the half goes to TRANS_CHECK_MAX_TIME_TOPIC.

The times are read from the store: each check re-appends the half to RMQ_SYS_TRANS_HALF_TOPIC
(as RocketMQ does), so the copies' store timestamps are the broker's own record of when each
check happened, with no client-side delivery jitter in them."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.config import BrokerConfig
from rocketq.client import LocalTransactionState, Message
from rocketq.client.aio import TransactionProducer
from rocketq.common.message import MessageExt
from rocketq.common.topic import TRANS_CHECK_MAX_TIME_TOPIC, TRANS_HALF_TOPIC
from rocketq.common.topic_config import TopicConfig
from rocketq.testing.broker import run_broker, run_namesrv, stored_records, topic_records
from rocketq.testing.cluster import FAST_CLIENT
from rocketq.testing.store import small_store_properties

TOPIC = "TxTiming"
INTERVAL_MS = 600
TIMEOUT_MS = 1500
CHECK_MAX = 3
BROKER_CONF = {
    "transactionCheckInterval": str(INTERVAL_MS),
    "transactionTimeOut": str(TIMEOUT_MS),
    "transactionCheckMax": str(CHECK_MAX),
}


class Undecided:
    def __init__(self) -> None:
        self.checked: list[MessageExt] = []

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        return LocalTransactionState.UNKNOWN

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        self.checked.append(msg)
        return LocalTransactionState.UNKNOWN


@pytest.mark.timeout(60)
async def test_checks_wait_the_timeout_come_an_interval_apart_and_stop_at_the_maximum(
    tmp_path: Path,
) -> None:
    config = BrokerConfig.from_properties(BROKER_CONF)
    listener = Undecided()
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "s",
            namesrv_addr=ns.addr,
            config=config,
            store_properties=small_store_properties(),
        ) as broker,
    ):
        broker.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=TOPIC, read_queue_nums=1, write_queue_nums=1)
        )
        await broker.register_broker_all()
        producer = TransactionProducer("pg-timing", listener, namesrv_addr=ns.addr, **FAST_CLIENT)
        async with producer:
            sent = await producer.send_message_in_transaction(Message(TOPIC, b"undecided"))
            [discarded] = await stored_records(broker, TRANS_CHECK_MAX_TIME_TOPIC, 1)
        halves = topic_records(broker, TRANS_HALF_TOPIC)
    original, *copies = halves
    assert original.uniq_key == sent.msg_id
    assert len(copies) == CHECK_MAX  # one re-appended copy per check, none after the last
    born_ms = original.born_timestamp
    assert copies[0].store_timestamp - born_ms >= TIMEOUT_MS  # not checked while too young
    for earlier, later in pairwise(copies):
        assert later.store_timestamp - earlier.store_timestamp >= INTERVAL_MS
    assert [c.properties["TRANSACTION_CHECK_TIMES"] for c in copies] == ["1", "2", "3"]
    assert [m.properties["TRANSACTION_CHECK_TIMES"] for m in listener.checked] == ["1", "2", "3"]
    assert discarded.uniq_key == sent.msg_id
    assert discarded.properties["TRANSACTION_CHECK_TIMES"] == str(CHECK_MAX)
    assert discarded.body == b"undecided"
