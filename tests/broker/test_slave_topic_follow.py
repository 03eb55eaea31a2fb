"""SlaveSynchronize.follow_topic_config (broker/slave_sync.py): a slave whose master is
unreachable tries again after ``METADATA_POLL_S``, not at once (a loop of failures would take
the slave's CPU from its replication)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rocketq.broker.metadata_acks import METADATA_POLL_S
from rocketq.testing.broker import run_broker

pytestmark = pytest.mark.timeout(30)


async def test_a_failed_topic_poll_is_retried_after_the_poll_period(tmp_path: Path) -> None:
    attempts: list[float] = []
    second = asyncio.Event()

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        attempts.append(time.monotonic())  # a master that closes every connection at once
        if len(attempts) >= 2:
            second.set()
        writer.close()

    server = await asyncio.start_server(refuse, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with run_broker(tmp_path) as slave:
            sync = slave.slave_synchronize
            sync.master_addr, sync.broker_id = f"127.0.0.1:{port}", 1
            follower = asyncio.create_task(sync.follow_topic_config())
            try:
                await asyncio.wait_for(second.wait(), 10)
                assert sync.topic_follower
            finally:
                follower.cancel()
                await asyncio.gather(follower, return_exceptions=True)
            assert not sync.topic_follower
    finally:
        server.close()
        await server.wait_closed()
    assert attempts[1] - attempts[0] >= METADATA_POLL_S * 0.9, attempts
