"""Transactional batches (rocketq's extension): many halves as one batch half, ended with one
request, checked back once; refused with RocketMQ's codes when the broker has it off."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.transaction_batch import PROPERTY_TRANSACTION_BATCH
from rocketq.client import LocalTransactionState, Message
from rocketq.client.aio import TransactionProducer
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.topic import TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import MessageIllegalError, RequestCodeNotSupportedError, SystemError_
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.headers import EndTransactionBatchRequestHeader
from rocketq.testing.broker import run_broker, run_namesrv, stored_records, topic_records
from rocketq.testing.cluster import FAST_CLIENT
from rocketq.testing.store import small_store_properties

COMMIT = LocalTransactionState.COMMIT
ROLLBACK = LocalTransactionState.ROLLBACK
TOPIC = "TxBatches"
# a broker that checks every 100 ms every half older than 300 ms
FAST_CHECKS: dict[str, Any] = {
    "transaction_check_interval_ms": 100,
    "transaction_time_out_ms": 300,
}


class Listener:
    """Answers every check COMMIT and keeps what it was shown."""

    def __init__(self) -> None:
        self.checked: list[MessageExt] = []

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        return LocalTransactionState.UNKNOWN

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        self.checked.append(msg)
        return COMMIT


@contextlib.asynccontextmanager
async def cluster(store: Path, **broker: Any) -> AsyncIterator[tuple[str, BrokerController]]:
    async with (
        run_namesrv() as ns,
        run_broker(
            store, namesrv_addr=ns.addr, store_properties=small_store_properties(), **broker
        ) as b,
    ):
        b.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=TOPIC, read_queue_nums=2, write_queue_nums=2)
        )
        await b.register_broker_all()
        yield ns.addr, b


def producer(addr: str, listener: Any, name: str = "p1") -> TransactionProducer:
    return TransactionProducer(
        "pg-tx", listener, namesrv_addr=addr, instance_name=name, **FAST_CLIENT
    )


pytestmark = pytest.mark.timeout(60)


def rows(count: int, prefix: str = "row") -> list[Message]:
    return [Message(TOPIC, f"{prefix}-{i}".encode(), keys=[f"k{i}"]) for i in range(count)]


async def test_a_batch_half_is_one_record_one_op_and_commits_every_message_with_its_id(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path / "s") as (addr, broker), producer(addr, None) as p:
        msgs = rows(5)
        handle = await p.send_half_batch(msgs, properties={"tag": "w:0"})
        [half] = await stored_records(broker, TRANS_HALF_TOPIC, 1)
        assert topic_records(broker, TOPIC) == []
        await p.end_transaction(None, handle, COMMIT)
        await p.end_transaction(None, handle, COMMIT)  # idempotent: no second delivery
        finals = await stored_records(broker, TOPIC, 5)
        [op] = await stored_records(broker, TRANS_OP_HALF_TOPIC, 1)
    assert handle.batch_count == 5
    assert handle.msg_id == msgs[0].uniq_key == half.uniq_key
    assert half.properties[PROPERTY_TRANSACTION_BATCH] == "5"
    assert half.properties["tag"] == "w:0"
    assert half.properties["REAL_TOPIC"] == TOPIC
    assert half.properties["PGROUP"] == "pg-tx"
    assert op.body == str(half.queue_offset).encode()
    assert [m.body for m in finals] == [m.body for m in msgs]
    assert [m.uniq_key for m in finals] == [m.uniq_key for m in msgs]
    assert [m.keys for m in finals] == [[f"k{i}"] for i in range(5)]
    assert {m.queue_id for m in finals} == {handle_queue(half)}
    for final in finals:
        assert MessageSysFlag.get_transaction_value(final.sys_flag) == (
            MessageSysFlag.TRANSACTION_COMMIT_TYPE
        )
        assert final.prepared_transaction_offset == half.commitlog_offset
        assert "TRAN_MSG" not in final.properties


def handle_queue(half: object) -> int:
    return int(half.properties["REAL_QID"])  # type: ignore[attr-defined]


async def test_a_rolled_back_batch_delivers_nothing_and_the_other_decision_is_refused(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path / "s") as (addr, broker):
        async with producer(addr, None) as p:
            handle = await p.send_half_batch(rows(3))
            await p.end_transaction(None, handle, ROLLBACK)
            await stored_records(broker, TRANS_OP_HALF_TOPIC, 1)
            with pytest.raises(SystemError_, match="rolled back"):
                await p.end_transaction(None, handle, COMMIT)
        assert topic_records(broker, TOPIC) == []


async def test_a_batch_is_checked_back_once_and_the_answer_ends_every_message(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path / "s", **FAST_CHECKS) as (addr, broker):
        async with producer(addr, None, "dies") as p:  # sends the batch, never ends it
            handle = await p.send_half_batch(rows(20))
        listener = Listener()
        async with producer(addr, listener, "heir"):
            finals = await stored_records(broker, TOPIC, 20)
    assert sorted(m.body for m in finals) == sorted(f"row-{i}".encode() for i in range(20))
    assert {m.transaction_id for m in listener.checked} == {handle.msg_id}
    # one check per round for the batch, not 20: each check is the next round's (the half's
    # TRANSACTION_CHECK_TIMES one more than the last; a round before the heir registered
    # reached nobody). How many rounds ran before the COMMIT's op landed is the machine's
    # pace (a round every 100 ms), not a promise.
    times = [int(m.properties["TRANSACTION_CHECK_TIMES"]) for m in listener.checked]
    assert times
    assert times == list(range(times[0], times[0] + len(times)))


async def test_an_end_naming_the_wrong_count_is_refused(tmp_path: Path) -> None:
    async with cluster(tmp_path / "s") as (addr, broker):
        async with producer(addr, None) as p:
            handle = await p.send_half_batch(rows(4))
            header = EndTransactionBatchRequestHeader(
                producer_group=handle.producer_group,
                tran_state_table_offset=handle.tran_state_table_offset,
                commit_log_offset=handle.commit_log_offset,
                commit_or_rollback=LocalTransactionState.COMMIT.commit_or_rollback,
                msg_id=handle.msg_id,
                batch_count=3,
            )
            with pytest.raises(SystemError_, match="holds 4 batched messages, not 3"):
                await p.instance.api.end_transaction(
                    handle.broker_addr, header, code=RequestCode.END_TRANSACTION_BATCH
                )
        assert topic_records(broker, TOPIC) == []


async def test_with_the_extension_off_the_broker_answers_as_rocketmq(tmp_path: Path) -> None:
    async with cluster(tmp_path / "s", transaction_batch_enable=False) as (addr, broker):
        async with producer(addr, None) as p:
            with pytest.raises(MessageIllegalError, match="batch"):
                await p.send_half_batch(rows(2))
            single = await p.send_half_message(Message(TOPIC, b"one"))
            header = EndTransactionBatchRequestHeader(
                producer_group=single.producer_group,
                tran_state_table_offset=single.tran_state_table_offset,
                commit_log_offset=single.commit_log_offset,
                commit_or_rollback=LocalTransactionState.COMMIT.commit_or_rollback,
                msg_id=single.msg_id,
                batch_count=1,
            )
            with pytest.raises(RequestCodeNotSupportedError):
                await p.instance.api.end_transaction(
                    single.broker_addr, header, code=RequestCode.END_TRANSACTION_BATCH
                )
        assert topic_records(broker, TOPIC) == []
        halves = await stored_records(broker, TRANS_HALF_TOPIC, 1)  # dispatched: the single
        assert len(halves) == 1  # the refused batch stored nothing
