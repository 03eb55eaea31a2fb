"""Automatic failover: three ``rocketq broker`` processes in controller mode around an
in-process controller and name server. The master is killed with SIGKILL under SYNC sends
(allAckInSyncStateSet=true); a slave becomes master within seconds and takes sends; the old
master restarts, rejoins as a slave and is cut back to the consistent point; at the end every
acknowledged message is on the new master, and the three commitlogs and epoch files agree."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from rocketq.common.message_id import decode_message_id
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.testing.controller_mode import eventually, send_one
from rocketq.testing.controller_mode_group import run_controller_mode_group
from tests.e2e.ha_support import commitlog_bytes, open_stopped_store

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(120)]

TOPIC = "TopicFailover"


def _async(predicate: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return predicate()

    return probe


class Sender:
    """SYNC sends straight to one broker; every SEND_OK goes to the ledger (body -> offset)."""

    def __init__(self) -> None:
        self.client = RemotingClient()
        self.acked: dict[bytes, int] = {}
        self.acked_by: Counter[str] = Counter()
        self.seq = 0

    async def send(self, addr: str) -> bool:
        self.seq += 1
        body = b"m-%06d-" % self.seq + b"x" * 100
        try:
            response = await send_one(self.client, addr, TOPIC, body, queue_id=self.seq % 4)
        except (OSError, TimeoutError, ConnectionError):
            return False
        if response.code != ResponseCode.SUCCESS:
            return False
        self.acked[body] = decode_message_id(response.ext_fields["msgId"])[1]
        self.acked_by[addr] += 1
        return True

    async def send_many(self, addr: str, count: int) -> None:
        for _ in range(count):
            assert await self.send(addr)

    async def load(self, target: Callable[[], str], stop: asyncio.Event, workers: int = 4) -> None:
        """``workers`` senders to whatever ``target()`` names, until ``stop``."""

        async def one() -> None:
            while not stop.is_set():
                if not await self.send(target()):
                    await asyncio.sleep(0.02)  # refused or cut: try again (a retry pace)

        await asyncio.gather(*(one() for _ in range(workers)))


async def test_master_killed_a_slave_takes_over_and_the_old_master_rejoins_as_slave(
    tmp_path: Path,
) -> None:
    sender = Sender()
    try:
        async with run_controller_mode_group(tmp_path, 3) as group:
            old_master = group.at(group.master)
            await sender.send_many(group.master, 40)

            stop = asyncio.Event()
            loading = asyncio.create_task(sender.load(lambda: group.master, stop))
            before = len(sender.acked)
            assert await eventually(_async(lambda: len(sender.acked) >= before + 40), 15)
            killed_at = time.monotonic()
            old_master.kill()  # mid-load: sends in flight on it were never acknowledged
            new_master = await group.elected(1, 2)
            assert new_master != old_master.addr
            assert await eventually(_async(lambda: sender.acked_by[new_master] > 0), 15)
            outage_s = time.monotonic() - killed_at
            stop.set()
            await asyncio.wait_for(loading, 15)
            print(f"kill -9 of the master to the next SEND_OK on the new master: {outage_s:.2f} s")
            assert outage_s < 10
            await sender.send_many(new_master, 40)

            await asyncio.to_thread(old_master.start)  # rejoins: slave, cut, copied, in sync
            await group.elected(3, 2, 30)
            await sender.send_many(new_master, 10)  # acked by all three
            await group.stop()
    finally:
        await sender.client.shutdown()

    check_replicas([b.conf for b in group.brokers], new_master, sender.acked)


def check_replicas(confs: list[dict[str, str]], new_master: str, acked: dict[bytes, int]) -> None:
    """Every acknowledged message on the new master; the commitlogs byte-identical up to what
    the whole set acknowledged; the same epoch file everywhere."""
    stores = {c["listenPort"]: open_stopped_store(c) for c in confs}
    try:
        master_store = stores[new_master.rsplit(":", 1)[1]]
        for body, phy in acked.items():
            got = master_store.look_message_by_offset(phy)
            assert got is not None
            assert got.body == body
        end = min(s.get_max_phy_offset() for s in stores.values())
        assert end > max(acked.values())
        logs = {commitlog_bytes(s.config.commit_log_dir, end) for s in stores.values()}
        assert len(logs) == 1  # byte-identical up to what the whole set acknowledged
        epochs = {Path(s.config.epoch_file_path).read_text() for s in stores.values()}
        assert len(epochs) == 1  # the same epoch file on every replica
        entries = epochs.pop().splitlines()[2:]
        assert [e.split("-")[0] for e in entries] == ["1", "2"]
        assert entries[0] == "1-0"
    finally:
        for s in stores.values():
            s.shutdown()
