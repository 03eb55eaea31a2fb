"""An end repeated after a broker restart (clean, then SIGKILL) for a half ended before it:
the broker answers SUCCESS from the ended record it rebuilt from the op queue, writes the
message no second time, and refuses the opposite decision (docs/transactions.md)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.client import LocalTransactionState, Message
from rocketq.client.aio import TransactionProducer
from rocketq.client.transaction import TransactionHandle
from rocketq.errors import SystemError_
from rocketq.testing.broker import SMALL_INDEX, run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.cluster import FAST_CLIENT
from rocketq.testing.store import small_store_properties

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]
TOPIC = "TxEndRestart"
COMMIT = LocalTransactionState.COMMIT
ROLLBACK = LocalTransactionState.ROLLBACK


async def start_broker(work_dir: Path, namesrv: str) -> BrokerProcess:
    """``rocketq broker -c`` on ``work_dir / "store"``; restarted by ``broker.start`` on the
    same port each time (the handles name the broker's address)."""
    conf = {
        "brokerName": "broker-a",
        "brokerIP1": "127.0.0.1",
        "namesrvAddr": namesrv,
        "storePathRootDir": str(work_dir / "store"),
        "autoCreateTopicEnable": "true",
        **small_store_properties(),
        **SMALL_INDEX,
    }
    broker = BrokerProcess(work_dir, conf)
    await asyncio.to_thread(broker.start, 60.0)  # the name server runs on this loop
    return broker


async def stored(admin: AsyncAdminClient) -> int:
    """The messages in TOPIC's queues (their max offsets)."""
    stats = await admin.examine_topic_stats(TOPIC)
    return sum(offset.max_offset for offset in stats.offset_table.values())


async def end_again(addr: str, handle: TransactionHandle) -> None:
    """A producer that did not send the half ends it again (a Spark driver's retry does)."""
    async with TransactionProducer(
        handle.producer_group, None, namesrv_addr=addr, instance_name="again", **FAST_CLIENT
    ) as p:
        await p.end_transaction(None, handle, COMMIT)
        with pytest.raises(SystemError_, match="already committed"):
            await p.end_transaction(None, handle, ROLLBACK)


async def test_an_end_repeated_after_a_restart_or_a_kill_commits_once(tmp_path: Path) -> None:
    work_dir = tmp_path / "broker"
    async with run_namesrv() as ns:
        broker = await start_broker(work_dir, ns.addr)
        try:
            async with TransactionProducer(
                "pg-end-restart", None, namesrv_addr=ns.addr, instance_name="first", **FAST_CLIENT
            ) as p:
                single = await p.send_half_message(Message(TOPIC, b"single"))
                await p.end_transaction(None, single, COMMIT)
                batch = await p.send_half_batch([Message(TOPIC, b"b%d" % i) for i in range(3)])
                await p.end_transaction(None, batch, COMMIT)
            assert await asyncio.to_thread(broker.stop) == 0
            await asyncio.to_thread(broker.start, 60.0)
            await end_again(ns.addr, single)
            await end_again(ns.addr, batch)
            async with AsyncAdminClient(namesrv_addr=ns.addr) as admin:
                assert await stored(admin) == 4
            assert await asyncio.to_thread(broker.kill) == -signal.SIGKILL
            await asyncio.to_thread(broker.start, 60.0)
            await end_again(ns.addr, single)
            await end_again(ns.addr, batch)
            async with AsyncAdminClient(namesrv_addr=ns.addr) as admin:
                assert await stored(admin) == 4
        finally:
            await asyncio.to_thread(broker.stop)
