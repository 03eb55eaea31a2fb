"""kill -9 of the slave, 10 times under load: while it is down the SYNC_MASTER answers
SLAVE_NOT_AVAILABLE (stored, never SEND_OK); each time it comes back it recovers, resumes
from its own offset, and at the end holds every acknowledged message, byte-identical."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from rocketq.client.aio import Producer
from rocketq.testing.broker import run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.wait import until
from tests.e2e.ha_support import (
    FAST_PRODUCER,
    STORE_KEYS,
    Ledger,
    commitlog_bytes,
    commitlog_start,
    master_conf,
    missing_in_store,
    open_stopped_store,
    send_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(240)]

CYCLES = 10


def slave_conf(root: Path, master: BrokerProcess) -> dict[str, str]:
    """The conf of a slave process of ``master`` (started: its HA port is known)."""
    return {
        **master.conf,
        "brokerId": "1",
        "brokerRole": "SLAVE",
        "slaveReadEnable": "true",
        "listenPort": "0",
        "haListenPort": "0",
        "haMasterAddress": master.ha_addr,
        "storePathRootDir": str(root),
        **STORE_KEYS,
    }


async def test_slave_killed_10_times_under_load_ends_with_every_acked_message(
    tmp_path: Path,
) -> None:
    rng = random.Random(5)
    ledger = Ledger()
    async with run_namesrv() as ns:
        master = BrokerProcess(tmp_path / "m-proc", master_conf(tmp_path / "master", ns.addr))
        await asyncio.to_thread(master.start)
        slave = BrokerProcess(tmp_path / "s-proc", slave_conf(tmp_path / "slave", master))
        try:
            await asyncio.to_thread(slave.start)  # linked before any load: copies from 0
            async with Producer("pg", namesrv_addr=ns.addr, **FAST_PRODUCER) as producer:
                stop = asyncio.Event()
                load = asyncio.create_task(send_until(producer, ledger, stop, "s", workers=2))
                for cycle in range(CYCLES):
                    if cycle:
                        await asyncio.to_thread(slave.start)
                    before = len(ledger.acked)
                    assert await until(lambda n=before: len(ledger.acked) > n + 20, 30)
                    await asyncio.sleep(rng.uniform(0.05, 0.3))
                    slave.kill()
                    down_at = len(ledger.acked)
                    await asyncio.sleep(0.3)  # sends while the slave is down
                    # at most the sends already in flight at the kill were acknowledged
                    assert len(ledger.acked) <= down_at + 2
                await asyncio.to_thread(slave.start)
                n = len(ledger.acked)
                assert await until(lambda: len(ledger.acked) > n + 20, 30)
                stop.set()
                await asyncio.wait_for(load, 30)
        finally:
            await asyncio.to_thread(slave.stop)
            await asyncio.to_thread(master.stop)
    assert ledger.not_ok["SLAVE_NOT_AVAILABLE"] > 0
    m_store = open_stopped_store(master.conf)
    try:
        end = m_store.get_max_phy_offset()
        m_log = commitlog_bytes(m_store.config.commit_log_dir, end)
    finally:
        m_store.shutdown()
    s_store = open_stopped_store(slave.conf)
    try:
        assert missing_in_store(s_store, ledger.acked) == []
        s_end = s_store.get_max_phy_offset()
        assert s_end == end
        assert commitlog_start(s_store.config.commit_log_dir) == 0
        assert commitlog_bytes(s_store.config.commit_log_dir, s_end) == m_log
    finally:
        s_store.shutdown()
    print(
        f"HA slave kill loop: {CYCLES} cycles, {len(ledger.acked)} acknowledged, "
        f"not SEND_OK: {dict(ledger.not_ok)}, lost 0, {end} bytes byte-identical"
    )


async def test_a_stopped_slave_turns_sends_into_flush_slave_timeout_never_send_ok(
    tmp_path: Path,
) -> None:
    import os
    import signal

    ledger = Ledger()
    async with run_namesrv() as ns:
        m_conf = {**master_conf(tmp_path / "master", ns.addr), "syncFlushTimeout": "500"}
        master = BrokerProcess(tmp_path / "m-proc", m_conf)
        await asyncio.to_thread(master.start)
        slave = BrokerProcess(tmp_path / "s-proc", slave_conf(tmp_path / "slave", master))
        await asyncio.to_thread(slave.start)
        try:
            async with Producer("pg", namesrv_addr=ns.addr, **FAST_PRODUCER) as producer:
                stop = asyncio.Event()
                load = asyncio.create_task(send_until(producer, ledger, stop, "p", workers=2))
                assert await until(lambda: len(ledger.acked) > 50, 30)
                assert slave.proc is not None
                os.kill(slave.proc.pid, signal.SIGSTOP)  # alive, linked, silent
                try:
                    await asyncio.sleep(0.3)  # sends in flight at the stop settle
                    frozen = len(ledger.acked)
                    await asyncio.sleep(2.0)
                    assert len(ledger.acked) == frozen  # nothing acknowledged meanwhile
                    assert ledger.not_ok["FLUSH_SLAVE_TIMEOUT"] > 0
                finally:
                    os.kill(slave.proc.pid, signal.SIGCONT)
                n = len(ledger.acked)
                assert await until(lambda: len(ledger.acked) > n + 20, 30)  # back to SEND_OK
                stop.set()
                await asyncio.wait_for(load, 30)
        finally:
            await asyncio.to_thread(slave.stop)
            await asyncio.to_thread(master.stop)
    s_store = open_stopped_store(slave.conf)
    try:
        assert missing_in_store(s_store, ledger.acked) == []
    finally:
        s_store.shutdown()
    print(
        f"HA slave stopped: {len(ledger.acked)} acknowledged, "
        f"not SEND_OK: {dict(ledger.not_ok)}, lost 0"
    )
