"""TransactionProducer against a real broker: commit, rollback, check-back, restarts, ends
from another client, and what the broker's store holds afterwards (RocketMQ's layout)."""

from __future__ import annotations

import asyncio
import contextlib
import pickle
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.transaction import CID_RMQ_SYS_TRANS
from rocketq.client import (
    ConsumeStatus,
    LocalTransactionState,
    Message,
    TransactionHandle,
)
from rocketq.client import TransactionProducer as BlockingTransactionProducer
from rocketq.client.aio import PushConsumer, TransactionProducer
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.topic import (
    TRANS_CHECK_MAX_TIME_TOPIC,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
)
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import SystemError_
from rocketq.testing.broker import run_broker, run_namesrv, stored_records, topic_records
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until

COMMIT = LocalTransactionState.COMMIT
ROLLBACK = LocalTransactionState.ROLLBACK
UNKNOWN = LocalTransactionState.UNKNOWN
TOPIC = "TxOrders"
SMALL_STORE = small_store_properties()
# a broker that checks every 100 ms every half older than 300 ms
FAST_CHECKS: dict[str, Any] = {
    "transaction_check_interval_ms": 100,
    "transaction_time_out_ms": 300,
}


class Listener:
    """Decides with ``execute``; answers checks from ``checks`` (a state or a list by count)."""

    def __init__(
        self, execute: LocalTransactionState = COMMIT, check: Any = COMMIT, *, delay_s: float = 0
    ) -> None:
        self.execute = execute
        self.check = check
        self.delay_s = delay_s
        self.executed: list[tuple[Message, Any]] = []
        self.checked: list[MessageExt] = []

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        self.executed.append((msg, arg))
        return self.execute

    async def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        self.checked.append(msg)
        if callable(self.check):
            return self.check(len(self.checked))  # type: ignore[no-any-return]
        return self.check  # type: ignore[no-any-return]


@contextlib.asynccontextmanager
async def cluster(store: Path, **broker: Any) -> AsyncIterator[tuple[str, BrokerController]]:
    async with (
        run_namesrv() as ns,
        run_broker(store, namesrv_addr=ns.addr, store_properties=SMALL_STORE, **broker) as b,
    ):
        b.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=TOPIC, read_queue_nums=2, write_queue_nums=2)
        )
        await b.register_broker_all()
        yield ns.addr, b


def producer(addr: str, listener: Any, name: str = "p1", **kw: Any) -> TransactionProducer:
    return TransactionProducer(
        "pg-tx", listener, namesrv_addr=addr, instance_name=name, **FAST_CLIENT, **kw
    )


async def test_commit_delivers_the_message_with_its_msg_id_and_writes_rocketmq_records(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path / "s") as (addr, broker):
        listener = Listener(COMMIT)
        async with producer(addr, listener) as p:
            msg = Message(TOPIC, b"order-1", tags="TagA", keys=["k1"], properties={"a": "1"})
            result = await p.send_message_in_transaction(msg, arg={"row": 1})
        assert result.local_transaction_state is COMMIT
        assert listener.executed[0][1] == {"row": 1}
        assert listener.executed[0][0].transaction_id == result.msg_id
        [half] = await stored_records(broker, TRANS_HALF_TOPIC, 1)
        [op] = await stored_records(broker, TRANS_OP_HALF_TOPIC, 1)
        [final] = await stored_records(broker, TOPIC, 1)
    assert half.properties["REAL_TOPIC"] == TOPIC
    assert half.properties["REAL_QID"] == str(result.message_queue.queue_id)
    assert half.properties["TRAN_MSG"] == "true"
    assert half.properties["PGROUP"] == "pg-tx"
    assert half.queue_id == 0
    assert MessageSysFlag.get_transaction_value(half.sys_flag) == 0
    assert op.tags == "d"
    assert op.body == b"0"
    assert op.queue_id == 0
    assert final.body == b"order-1"
    assert final.queue_id == result.message_queue.queue_id
    assert final.uniq_key == result.msg_id
    assert final.properties["a"] == "1"
    assert final.tags == "TagA"
    assert final.keys == ["k1"]
    assert "TRAN_MSG" not in final.properties
    assert "REAL_TOPIC" not in final.properties
    assert MessageSysFlag.get_transaction_value(final.sys_flag) == (
        MessageSysFlag.TRANSACTION_COMMIT_TYPE
    )
    assert final.prepared_transaction_offset == half.commitlog_offset


async def test_committed_message_reaches_a_push_consumer_and_a_rolled_back_one_never(
    tmp_path: Path,
) -> None:
    got: list[MessageExt] = []

    def on_message(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    async with cluster(tmp_path / "s") as (addr, broker):
        async with producer(addr, Listener(ROLLBACK)) as p:
            rolled = await p.send_message_in_transaction(Message(TOPIC, b"rolled back"))
            p.listener = Listener(COMMIT)
            committed = await p.send_message_in_transaction(Message(TOPIC, b"committed"))
        assert rolled.local_transaction_state is ROLLBACK
        ops = await stored_records(broker, TRANS_OP_HALF_TOPIC, 2)
        assert sorted(op.body for op in ops) == [b"0", b"1"]
        consumer = PushConsumer(
            "cg-tx",
            namesrv_addr=addr,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
            **FAST_CONSUMER,
        )
        consumer.subscribe(TOPIC, "*")
        consumer.register_message_listener(on_message)
        await consumer.start()
        try:
            assert await until(lambda: len(got) >= 1, 30)
        finally:
            await consumer.shutdown()
        assert [m.body for m in topic_records(broker, TOPIC)] == [b"committed"]
    assert [m.body for m in got] == [b"committed"]
    assert got[0].msg_id == committed.msg_id


async def test_a_new_producer_of_the_group_decides_a_half_whose_producer_died(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path / "s", **FAST_CHECKS) as (addr, broker):
        async with producer(addr, None, "dies") as p:  # sends the half, never ends it
            handle = await p.send_half_message(Message(TOPIC, b"pending", properties={"x": "y"}))
        listener = Listener(check=COMMIT)
        async with producer(addr, listener, "heir"):
            [final] = await stored_records(broker, TOPIC, 1)
    checked = listener.checked[0]  # a second check can race the commit's END: the same half
    assert checked.topic == TOPIC  # the check shows the real topic and queue
    assert checked.transaction_id == handle.msg_id == final.uniq_key
    assert checked.properties["x"] == "y"
    # "1" unless a scan ran between the two producers (a check with no one to ask still counts)
    assert int(checked.properties["TRANSACTION_CHECK_TIMES"]) >= 1
    assert {m.transaction_id for m in listener.checked} == {handle.msg_id}
    # which half a check is about, in the handle's terms
    assert checked.properties["TRAN_PREPARED_QUEUE_OFFSET"] == str(handle.tran_state_table_offset)
    assert final.body == b"pending"


async def test_unknown_is_checked_again_until_the_fifteenth_check_commits(tmp_path: Path) -> None:
    def decide(count: int) -> LocalTransactionState:
        return COMMIT if count == 15 else UNKNOWN

    # the test runs the scans (no timer round within 60 s, RocketMQ's interval): the END that
    # answers the 15th check lands before a 16th scan could discard the half, whatever the
    # machine's pace, as RocketMQ's interval is that grace period
    manual = {**FAST_CHECKS, "transaction_check_interval_ms": 60_000}
    async with cluster(tmp_path / "s", **manual) as (addr, broker):
        service = broker.transactional_message_check_service
        listener = Listener(execute=UNKNOWN, check=decide)

        async def scan_checks_once() -> bool:
            """One scan; True when it checked the half (past its 300 ms timeout)."""
            summary = await service.check()
            assert summary.checked <= 1
            return summary.checked == 1

        async with producer(addr, listener) as p:
            result = await p.send_message_in_transaction(Message(TOPIC, b"slow"))
            assert result.local_transaction_state is UNKNOWN
            for n in range(1, 16):
                for _ in range(200):  # the first checks once the half is 300 ms old
                    if await scan_checks_once():
                        break
                    await asyncio.sleep(0.05)
                assert await until(lambda n=n: len(listener.checked) == n, 10), n
            [final] = await stored_records(broker, TOPIC, 1)
            await stored_records(broker, TRANS_OP_HALF_TOPIC, 1)  # the END's op: scans see it
            for _ in range(3):  # scans after it: a 16th check (or a discard) would come now
                assert not await scan_checks_once()
        assert topic_records(broker, TRANS_CHECK_MAX_TIME_TOPIC) == []
    counts = [int(m.properties["TRANSACTION_CHECK_TIMES"]) for m in listener.checked]
    assert counts == list(range(1, 16))
    assert final.body == b"slow"


async def test_a_half_unknown_fifteen_times_is_discarded_to_trans_check_max_time_topic(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path / "s", **FAST_CHECKS) as (addr, broker):
        listener = Listener(execute=UNKNOWN, check=UNKNOWN)
        async with producer(addr, listener) as p:
            result = await p.send_message_in_transaction(Message(TOPIC, b"never"))
            [discarded] = await stored_records(broker, TRANS_CHECK_MAX_TIME_TOPIC, 1)
            assert await until(lambda: len(listener.checked) >= 15, 10)
            service = broker.transactional_message_check_service
            rounds = service.rounds  # a few more rounds: a 16th check would show up in them
            assert await until(lambda: service.rounds > rounds + 3, 10), service.rounds
        assert topic_records(broker, TOPIC) == []
        tc = broker.topic_config_manager.select_topic_config(TRANS_CHECK_MAX_TIME_TOPIC)
    assert len(listener.checked) == 15
    assert discarded.uniq_key == result.msg_id
    assert discarded.properties["REAL_TOPIC"] == TOPIC
    assert discarded.properties["TRANSACTION_CHECK_TIMES"] == "15"
    assert tc is not None
    assert tc.read_queue_nums == 1
    assert tc.perm == 6


async def test_check_progress_and_pending_halves_survive_a_broker_restart(tmp_path: Path) -> None:
    store = tmp_path / "s"
    first = Listener(execute=UNKNOWN, check=UNKNOWN)
    async with cluster(store, **FAST_CHECKS) as (addr, broker):
        async with producer(addr, first) as p:
            await p.send_message_in_transaction(Message(TOPIC, b"pending"))
            p.listener = Listener(COMMIT)
            await p.send_message_in_transaction(Message(TOPIC, b"ended before"))
            p.listener = first
            assert await until(lambda: len(first.checked) >= 3, 15)
        offsets = broker.consumer_offset_manager.query_offsets(CID_RMQ_SYS_TRANS, TRANS_HALF_TOPIC)
        assert offsets[0] > 0
    second = Listener(check=COMMIT)
    async with cluster(store, **FAST_CHECKS) as (addr, broker):
        restored = broker.consumer_offset_manager.query_offsets(CID_RMQ_SYS_TRANS, TRANS_HALF_TOPIC)
        assert restored[0] >= offsets[0]
        async with producer(addr, second):
            finals = await stored_records(broker, TOPIC, 2)
            assert await until(lambda: len(second.checked) >= 1, 10)
    assert sorted(m.body for m in finals) == [b"ended before", b"pending"]
    assert {m.body for m in second.checked} == {b"pending"}  # the ended one is never checked
    before = max(int(m.properties["TRANSACTION_CHECK_TIMES"]) for m in first.checked)
    # the count goes on from where it was (more than one more if a scan found no producer)
    assert int(second.checked[0].properties["TRANSACTION_CHECK_TIMES"]) > before


async def test_a_driver_client_ends_halves_sent_by_another_client_from_pickled_handles(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path / "s") as (addr, broker):
        async with producer(addr, None, "executor") as executor:
            handles = [
                await executor.send_half_message(Message(TOPIC, f"part-{i}".encode()))
                for i in range(3)
            ]
        shipped: list[TransactionHandle] = pickle.loads(pickle.dumps(handles))
        async with producer(addr, Listener(), "driver") as driver:
            await driver.end_transaction(None, shipped[0], COMMIT)
            await driver.end_transaction(broker.broker_addr, shipped[1], COMMIT)
            await driver.end_transaction(None, shipped[2], ROLLBACK)
            await driver.end_transaction(None, shipped[0], COMMIT)  # idempotent
            with pytest.raises(SystemError_, match="already committed"):
                await driver.end_transaction(None, shipped[1], ROLLBACK)
        finals = await stored_records(broker, TOPIC, 2)
        await asyncio.sleep(0)
        assert sorted(m.body for m in topic_records(broker, TOPIC)) == [b"part-0", b"part-1"]
    assert {m.uniq_key for m in finals} == {shipped[0].msg_id, shipped[1].msg_id}


async def test_an_end_naming_the_original_half_after_checks_ends_every_copy_once(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path / "s", **FAST_CHECKS) as (addr, broker):
        listener = Listener(check=UNKNOWN)
        async with producer(addr, listener) as p:
            handle = await p.send_half_message(Message(TOPIC, b"late driver"))
            assert await until(lambda: len(listener.checked) >= 2, 15)
            await p.end_transaction(None, handle, COMMIT)
            service = broker.transactional_message_check_service
            rounds = service.rounds
            # a scan under way when the end arrived may still check once; the next ones do not
            assert await until(lambda: service.rounds >= rounds + 2, 10)
            sent, rounds = service.checks_sent, service.rounds
            assert await until(lambda: service.rounds >= rounds + 5, 10)
            assert service.checks_sent == sent
        assert [m.body for m in topic_records(broker, TOPIC)] == [b"late driver"]


async def test_the_broker_refuses_an_end_that_does_not_name_a_half(tmp_path: Path) -> None:
    async with cluster(tmp_path / "s") as (addr, _broker), producer(addr, None) as p:
        handle = await p.send_half_message(Message(TOPIC, b"x"))
        wrong_group = TransactionHandle(**{**_fields(handle), "producer_group": "other"})
        with pytest.raises(SystemError_, match="The producer group wrong"):
            await p.end_transaction(None, wrong_group, COMMIT)
        wrong_offset = TransactionHandle(**{**_fields(handle), "tran_state_table_offset": 7})
        with pytest.raises(SystemError_, match="state table offset wrong"):
            await p.end_transaction(None, wrong_offset, COMMIT)
        nowhere = TransactionHandle(**{**_fields(handle), "commit_log_offset": 1 << 40})
        with pytest.raises(SystemError_, match="Find prepared transaction message failed"):
            await p.end_transaction(None, nowhere, COMMIT)
        await p.end_transaction(None, handle, UNKNOWN)  # answered, nothing ended
        await p.end_transaction(None, handle, ROLLBACK)


def _fields(handle: TransactionHandle) -> dict[str, Any]:
    return {name: getattr(handle, name) for name in handle.__dataclass_fields__}


async def test_reject_transaction_message_refuses_halves_with_no_permission(
    tmp_path: Path,
) -> None:
    from rocketq.errors import ClientError

    async with cluster(tmp_path / "s", reject_transaction_message=True) as (addr, broker):
        async with producer(addr, Listener()) as p:
            with pytest.raises(ClientError, match="transaction message is forbidden"):
                await p.send_message_in_transaction(Message(TOPIC, b"x"))
        assert topic_records(broker, TRANS_HALF_TOPIC) == []


def test_blocking_producer_commits_and_answers_checks_on_a_worker_thread(tmp_path: Path) -> None:
    import threading

    threads: list[str] = []

    class Blocking:
        def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
            threads.append(threading.current_thread().name)
            return UNKNOWN if arg == "later" else COMMIT

        def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
            threads.append(threading.current_thread().name)
            return COMMIT

    async def serve(ready: asyncio.Event, done: asyncio.Event, box: dict[str, Any]) -> None:
        async with cluster(tmp_path / "s", **FAST_CHECKS) as (addr, broker):
            box["addr"], box["broker"] = addr, broker
            ready.set()
            await done.wait()

    box: dict[str, Any] = {}
    loop = asyncio.new_event_loop()
    ready, done = asyncio.Event(), asyncio.Event()
    server = threading.Thread(target=loop.run_until_complete, args=(serve(ready, done, box),))
    server.start()
    try:
        assert _wait_threadsafe(loop, ready)
        p = BlockingTransactionProducer(
            "pg-tx", Blocking(), namesrv_addr=box["addr"], instance_name="blocking", **FAST_CLIENT
        )
        with p:
            now = p.send_message_in_transaction(Message(TOPIC, b"now"), arg="now")
            later = p.send_message_in_transaction(Message(TOPIC, b"later"), arg="later")
            assert _wait(lambda: len(threads) >= 3)
            # the check's END must arrive while the producer lives
            assert _wait(lambda: len(topic_records(box["broker"], TOPIC)) >= 2)
            finals = topic_records(box["broker"], TOPIC)
    finally:
        loop.call_soon_threadsafe(done.set)
        server.join(60)
        loop.close()
    assert now.local_transaction_state is COMMIT
    assert later.local_transaction_state is UNKNOWN
    assert threads[0] == threads[1] == threading.current_thread().name
    assert threads[2] != threading.current_thread().name
    assert sorted(m.body for m in finals) == [b"later", b"now"]


def _wait_threadsafe(loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> bool:
    return _wait(event.is_set)


def _wait(predicate: Any, timeout_s: float = 20) -> bool:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


async def test_resume_check_half_message_puts_a_discarded_half_back_to_be_checked_again(
    tmp_path: Path,
) -> None:
    from rocketq.remoting.protocol.codes import RequestCode
    from rocketq.remoting.protocol.command import RemotingCommand
    from rocketq.response_code import ResponseCode

    async with cluster(tmp_path / "s", **FAST_CHECKS, transaction_check_max=2) as (addr, broker):
        listener = Listener(execute=UNKNOWN, check=UNKNOWN)
        async with producer(addr, listener) as p:
            await p.send_message_in_transaction(Message(TOPIC, b"resumed"))
            [discarded] = await stored_records(broker, TRANS_CHECK_MAX_TIME_TOPIC, 1)
            assert await until(lambda: len(listener.checked) >= 2, 10)
            listener.check = COMMIT
            remoting = p.instance.remoting
            bad = RemotingCommand.create_request(
                RequestCode.RESUME_CHECK_HALF_MESSAGE, {"msgId": "not-an-id"}
            )
            refused = await remoting.invoke(broker.broker_addr, bad, 5)
            assert refused.code == ResponseCode.SYSTEM_ERROR
            resume = RemotingCommand.create_request(
                RequestCode.RESUME_CHECK_HALF_MESSAGE, {"msgId": discarded.msg_id}
            )
            answer = await remoting.invoke(broker.broker_addr, resume, 5)
            assert answer.code == ResponseCode.SUCCESS, answer.remark
            [final] = await stored_records(broker, TOPIC, 1)
    assert final.body == b"resumed"
    counts = [m.properties["TRANSACTION_CHECK_TIMES"] for m in listener.checked]
    assert counts[:2] == ["1", "2"]  # the checks before the discard
    assert "1" in counts[2:]  # counted from 0 again after the resume


async def test_a_producer_killed_inside_its_local_transaction_is_decided_by_another(
    tmp_path: Path,
) -> None:
    import json
    import signal
    import sys

    repo_root = Path(__file__).resolve().parents[2]  # noqa: ASYNC240 -- one path computation
    async with cluster(tmp_path / "s", **FAST_CHECKS) as (addr, broker):
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.client.half_process",
            "--namesrv",
            addr,
            "--group",
            "pg-tx",
            "--topic",
            TOPIC,
            cwd=repo_root,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            assert proc.stdout is not None
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
            half_id = json.loads(line)["msg_id"]
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)
            await proc.wait()
        assert proc.returncode == -signal.SIGKILL
        listener = Listener(check=COMMIT)
        async with producer(addr, listener, "heir"):
            [final] = await stored_records(broker, TOPIC, 1)
    assert final.uniq_key == half_id
    assert final.body == b"from the dead"
    assert {m.transaction_id for m in listener.checked} == {half_id}


async def test_checks_round_robin_over_the_groups_producers_and_reach_one_with_a_listener(
    tmp_path: Path,
) -> None:
    from rocketq.client.aio import Producer

    async with cluster(tmp_path / "s", **FAST_CHECKS) as (addr, broker):
        async with producer(addr, None, "sender") as sender:
            handle = await sender.send_half_message(Message(TOPIC, b"mixed group"))
        plain = Producer("pg-tx", namesrv_addr=addr, instance_name="plain", **FAST_CLIENT)
        listener = Listener(check=COMMIT)
        async with plain, producer(addr, listener, "decider"):
            [final] = await stored_records(broker, TOPIC, 1)
    assert final.uniq_key == handle.msg_id
    assert {m.transaction_id for m in listener.checked} == {handle.msg_id}


async def test_check_immunity_time_delays_a_halfs_first_check_without_holding_up_others(
    tmp_path: Path,
) -> None:
    import time

    seen: dict[str, float] = {}

    def decide(_count: int) -> LocalTransactionState:
        return COMMIT

    async with cluster(tmp_path / "s", **FAST_CHECKS) as (addr, broker):
        listener = Listener(execute=UNKNOWN, check=decide)
        async with producer(addr, listener) as p:
            immune = await p.send_message_in_transaction(
                Message(TOPIC, b"immune", properties={"CHECK_IMMUNITY_TIME_IN_SECONDS": "2"})
            )
            normal = await p.send_message_in_transaction(Message(TOPIC, b"normal"))

            def first_checks() -> bool:
                for m in listener.checked:
                    seen.setdefault(m.transaction_id or "", time.time())
                return immune.msg_id in seen and normal.msg_id in seen

            assert await until(first_checks, 20)
            finals = await stored_records(broker, TOPIC, 2)
    assert seen[normal.msg_id] < seen[immune.msg_id]  # the immune half did not block the queue
    born_s = next(m for m in listener.checked if m.transaction_id == immune.msg_id).born_timestamp
    assert seen[immune.msg_id] - born_s / 1000 >= 2.0  # not checked within its immunity
    assert sorted(m.body for m in finals) == [b"immune", b"normal"]
