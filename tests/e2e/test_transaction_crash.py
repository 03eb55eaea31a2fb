"""A broker SIGKILLed with half messages pending: after the restart on the same store the
check-back asks a producer of the group again, every pending half is committed once, a half
ended before the crash is not asked about, and the store passes ``rocketq store check``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from rocketq.client import ConsumeStatus, LocalTransactionState, Message, MessageExt
from rocketq.client.aio import PushConsumer, TransactionProducer
from rocketq.store.check import check_store
from rocketq.testing.broker import run_namesrv
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER
from rocketq.testing.wait import until

pytestmark = pytest.mark.e2e
REPO_ROOT = Path(__file__).resolve().parents[2]
TOPIC = "TxCrash"
FAST_CHECKS = ["transaction_check_interval_ms=100", "transaction_time_out_ms=300"]


class Listener:
    def __init__(self, check: LocalTransactionState) -> None:
        self.check = check
        self.checked: list[MessageExt] = []

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        return arg  # type: ignore[no-any-return]

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        self.checked.append(msg)
        return self.check


async def start_broker(store: Path, namesrv: str) -> asyncio.subprocess.Process:
    args = ["--store", str(store), "--namesrv", namesrv]
    for item in FAST_CHECKS:
        args += ["--set", item]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.e2e.broker_process",
        *args,
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), 60)
    assert json.loads(line)["broker"]
    return proc


async def stop(proc: asyncio.subprocess.Process, sig: int) -> int:
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(sig)
    return await asyncio.wait_for(proc.wait(), 60)


def tx_producer(addr: str, listener: Listener, name: str) -> TransactionProducer:
    return TransactionProducer(
        "pg-crash", listener, namesrv_addr=addr, instance_name=name, **FAST_CLIENT
    )


async def test_halves_pending_at_a_broker_crash_are_checked_and_committed_once_after_restart(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    before = Listener(LocalTransactionState.UNKNOWN)
    after = Listener(LocalTransactionState.COMMIT)
    got: list[MessageExt] = []

    def on_message(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    async with run_namesrv() as ns:
        broker = await start_broker(store, ns.addr)
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
            assert await stop(broker, signal.SIGKILL) == -signal.SIGKILL
            broker = await start_broker(store, ns.addr)
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
            exit_code = await stop(broker, signal.SIGTERM)
    assert exit_code == 0  # the restarted broker shut down cleanly
    assert Counter(m.body for m in got) == Counter(
        [b"ended", b"pending-0", b"pending-1", b"pending-2"]
    )
    assert ended.msg_id not in {m.transaction_id for m in after.checked}
    report = check_store(str(store))
    assert report.ok, str(report)
