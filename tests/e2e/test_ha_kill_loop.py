"""kill -9 of a SYNC_MASTER with SYNC_FLUSH, 50 cycles under load from our real producer.

A master process (``rocketq broker``) and an in-process slave share a name server. Each
cycle starts the master, lets four senders run until some sends are acknowledged and a
random moment later, kills the master with SIGKILL mid-load. Right after each kill, every
message acknowledged so far must already be readable on the slave (that is SYNC_MASTER's
promise); at the end the master recovers once more, and every acknowledged message must be
on it at its queue offset, and the slave's commitlog must equal the master's byte for byte.
Figures go to RELIABILITY.md ("Replication").
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest

from rocketq.client.aio import Producer
from rocketq.testing.broker import run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.wait import until
from tests.e2e.ha_support import (
    FAST_PRODUCER,
    Ledger,
    commitlog_bytes,
    commitlog_start,
    master_conf,
    missing_in_store,
    open_stopped_store,
    run_slave,
    send_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

CYCLES = 50


@pytest.mark.timeout(420)
async def test_sync_master_killed_50_times_under_load_loses_no_acknowledged_message(
    tmp_path: Path,
) -> None:
    rng = random.Random(11)
    ledger = Ledger()
    started = time.monotonic()
    async with run_namesrv() as ns:
        conf = master_conf(tmp_path / "master", ns.addr)
        master = BrokerProcess(tmp_path / "master-proc", conf)
        async with (
            run_slave(tmp_path / "slave", ns.addr, master.conf) as slave,
            Producer("pg", namesrv_addr=ns.addr, **FAST_PRODUCER) as producer,
        ):
            for cycle in range(CYCLES):
                await asyncio.to_thread(master.start)
                if cycle == 0:  # linked before any load: the slave copies from offset 0
                    ha_client = slave.message_store.ha_service.ha_client
                    assert await until(ha_client.connected.is_set, 10)
                before = len(ledger.acked)
                stop = asyncio.Event()
                load = asyncio.create_task(send_until(producer, ledger, stop, f"c{cycle}"))
                assert await until(lambda n=before: len(ledger.acked) > n, 30), (
                    f"cycle {cycle}: no send acknowledged; failed {ledger.failed}"
                )
                await asyncio.sleep(rng.uniform(0.02, 0.3))  # the fault lands mid-load
                master.kill()
                stop.set()
                await asyncio.wait_for(load, 30)
                missing = missing_in_store_after_dispatch(slave, ledger)
                assert missing == [], f"cycle {cycle}: acked but not on the slave: {missing[:3]}"
            await asyncio.to_thread(master.start)  # recover once more, then stop cleanly
            assert await until(
                lambda: slave.message_store.ha_service.ha_client.connected.is_set(), 10
            )
            await asyncio.to_thread(master.stop)
            slave_end = slave.message_store.get_max_phy_offset()
            slave_dir = slave.message_store.config.commit_log_dir
            slave_start = commitlog_start(slave_dir)
            slave_log = commitlog_bytes(slave_dir, slave_end)
    store = open_stopped_store(conf)
    try:
        assert missing_in_store(store, ledger.acked) == []
        master_end = store.get_max_phy_offset()
        master_log = commitlog_bytes(store.config.commit_log_dir, master_end)
    finally:
        store.shutdown()
    assert slave_start == 0
    assert slave_end <= master_end
    assert master_log[:slave_end] == slave_log
    assert len(ledger.acked) >= CYCLES
    print(  # the figures RELIABILITY.md reports (pytest -s shows them)
        f"HA kill loop: {CYCLES} cycles, {len(ledger.acked)} acknowledged, "
        f"{ledger.failed} failed sends, not SEND_OK: {dict(ledger.not_ok)}, lost 0, "
        f"commitlog {master_end} bytes, {time.monotonic() - started:.1f} s"
    )


def missing_in_store_after_dispatch(slave: object, ledger: Ledger) -> list[object]:
    store = slave.message_store  # type: ignore[attr-defined]
    assert store.wait_for_dispatch(10)
    return list(missing_in_store(store, ledger.acked))
