"""The record of ended halves rebuilt at start-up from the op queue (broker/transaction.py):
a decision-carrying op is remembered for every half offset its body lists (RocketMQ 5 lists
several, comma-separated), an op without the decision (RocketMQ's own) is not."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rocketq.broker.transaction import (
    HALF_QUEUE_ID,
    PROPERTY_TRANSACTION_END,
    REMOVETAG,
)
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.topic import TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC
from rocketq.store.results import PutMessageStatus
from rocketq.testing.broker import run_broker

COMMIT = MessageSysFlag.TRANSACTION_COMMIT_TYPE
ROLLBACK = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE


def op_message(body: bytes, decision: int | None) -> MessageExt:
    props = {mc.PROPERTY_TAGS: REMOVETAG}
    if decision is not None:
        props[PROPERTY_TRANSACTION_END] = str(decision)
    return MessageExt(
        topic=TRANS_OP_HALF_TOPIC,
        queue_id=HALF_QUEUE_ID,
        body=body,
        flag=0,
        properties=props,
        sys_flag=0,
        born_timestamp=1,
        born_host=("127.0.0.1", 1),
        store_host=("127.0.0.1", 1),
        reconsume_times=0,
    )


async def test_ended_halves_are_rebuilt_from_decision_carrying_op_messages(
    tmp_path: Path,
) -> None:
    async with run_broker(tmp_path) as broker:
        # the start-up rebuild runs in the background: once done it can no longer read the ops
        # put below (under load it could, and the "behind its back" assert below then failed)
        await broker.transactional_message_service.wait_recovered()
        broker.transactional_message_service.select_topic_config(TRANS_HALF_TOPIC)
        for body, decision in ((b"5,7", COMMIT), (b"9", None), (b"11", ROLLBACK)):
            result = await asyncio.to_thread(
                broker.message_store.put_message, op_message(body, decision)
            )
            assert result.status is PutMessageStatus.PUT_OK
        assert broker.transactional_message_service.ended == {}  # written behind its back
    async with run_broker(tmp_path) as broker:
        service = broker.transactional_message_service
        await service.wait_recovered()
        assert dict(service.ended) == {5: COMMIT, 7: COMMIT, 11: ROLLBACK}
