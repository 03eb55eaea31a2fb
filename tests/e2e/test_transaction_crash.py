"""A broker SIGKILLed with half messages pending: after the restart on the same store the
check-back asks a producer of the group again, every pending half is committed once, a half
ended before the crash is not asked about, and the store passes ``rocketq store check``."""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rocketq.client import ConsumeStatus, LocalTransactionState, Message, MessageExt
from rocketq.client.aio import PushConsumer, TransactionProducer
from rocketq.store.check import check_store
from rocketq.testing.broker import SMALL_INDEX, run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until

pytestmark = pytest.mark.e2e
TOPIC = "TxCrash"


class Listener:
    def __init__(self, check: LocalTransactionState) -> None:
        self.check = check
        self.checked: list[MessageExt] = []

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        return arg  # type: ignore[no-any-return]

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        self.checked.append(msg)
        return self.check


async def start_broker(work_dir: Path, namesrv: str) -> BrokerProcess:
    """``rocketq broker -c`` on ``work_dir / "store"`` with the check-back every 100 ms."""
    conf = {
        "brokerName": "broker-a",
        "brokerIP1": "127.0.0.1",
        "namesrvAddr": namesrv,
        "storePathRootDir": str(work_dir / "store"),
        "transactionCheckInterval": "100",
        "transactionTimeOut": "300",
        **small_store_properties(),
        **SMALL_INDEX,
    }
    broker = BrokerProcess(work_dir, conf)
    # the name server runs on this loop: wait for the boot line in a thread
    await asyncio.to_thread(broker.start, 60.0)
    return broker


def tx_producer(addr: str, listener: Listener, name: str) -> TransactionProducer:
    return TransactionProducer(
        "pg-crash", listener, namesrv_addr=addr, instance_name=name, **FAST_CLIENT
    )


async def test_halves_pending_at_a_broker_crash_are_checked_and_committed_once_after_restart(
    tmp_path: Path,
) -> None:
    work_dir = tmp_path / "broker"
    store = work_dir / "store"
    before = Listener(LocalTransactionState.UNKNOWN)
    after = Listener(LocalTransactionState.COMMIT)
    got: list[MessageExt] = []

    def on_message(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    async with run_namesrv() as ns:
        broker = await start_broker(work_dir, ns.addr)
        try:
            async with tx_producer(ns.addr, before, "before") as p:
                ended = await p.send_message_in_transaction(
                    Message(TOPIC, b"ended"), arg=LocalTransactionState.COMMIT
                )
                pending = [
                    await p.send_message_in_transaction(
                        Message(TOPIC, b"pending-%d" % i), arg=LocalTransactionState.UNKNOWN
                    )
                    for i in range(3)
                ]
                ids = {r.msg_id for r in pending}
                assert await until(lambda: ids <= {m.transaction_id for m in before.checked}, 30)
            assert await asyncio.to_thread(broker.kill) == -signal.SIGKILL
            broker = await start_broker(work_dir, ns.addr)
            consumer = PushConsumer(
                "cg-crash",
                namesrv_addr=ns.addr,
                consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                **FAST_CONSUMER,
            )
            consumer.subscribe(TOPIC, "*")
            consumer.register_message_listener(on_message)
            async with tx_producer(ns.addr, after, "after"), consumer:
                assert await until(lambda: len(got) >= 4, 60)
                assert await until(lambda: ids <= {m.transaction_id for m in after.checked}, 10)
        finally:
            exit_code = await asyncio.to_thread(broker.stop)
    assert exit_code == 0  # the restarted broker shut down cleanly
    assert Counter(m.body for m in got) == Counter(
        [b"ended", b"pending-0", b"pending-1", b"pending-2"]
    )
    assert ended.msg_id not in {m.transaction_id for m in after.checked}
    report = check_store(str(store))
    assert report.ok, str(report)
