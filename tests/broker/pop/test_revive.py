"""The revive service (PopReviveService): a checkpoint read before its revive time is revived
at that time, not one ``reviveInterval`` later, and a whole checkpoint's un-acked messages come
back in one round, each once, with reconsumeTimes + 1 (also when a filter spread them over
more queue offsets than one read of the store returns)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from rocketq.broker.pop.revive import PopReviveService
from rocketq.response_code import ResponseCode
from rocketq.testing import pop as raw
from rocketq.testing.cluster import Cluster, run_cluster
from rocketq.testing.store import small_store_properties

TOPIC = "PopRevive"
GROUP = "pop-revive"
INVISIBLE_MS = 3000
COUNT = 32


@asynccontextmanager
async def cluster(tmp: Path) -> AsyncIterator[Cluster]:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    # rounds of their own only every minute: the tests drive the rounds
    async with run_cluster(
        tmp, store_properties=props, revive_interval_ms=60_000, revive_queue_num=1
    ) as c:
        await c.create_topic(TOPIC, queues=1)
        yield c


async def read_checkpoint(revive: PopReviveService) -> None:
    """Rounds of the one revive queue until its checkpoint is read (it arrives 1 s early)."""
    queue = revive.queues[0]
    deadline = time.monotonic() + 5.0
    while not queue.pending and time.monotonic() < deadline:
        await revive.revive_queue(queue)
        await asyncio.sleep(0.05)
    assert len(queue.pending) == 1


async def test_a_checkpoint_read_early_is_revived_at_its_time_with_all_its_messages(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as c:
        for i in range(COUNT):
            await c.send_raw(TOPIC, f"m{i}".encode())
        _, popped = await raw.pop(
            c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=INVISIBLE_MS,
            max_nums=COUNT,
        )  # fmt: skip
        assert len(popped) == COUNT
        expiry_ms = popped[0].extra.pop_time + INVISIBLE_MS
        revive = c.broker.pop_service.revive
        queue = revive.queues[0]
        await read_checkpoint(revive)
        now_ms = c.broker.message_store.now_ms()
        assert now_ms < expiry_ms
        wait_s = revive._next_round_s()
        after_ms = c.broker.message_store.now_ms()  # a loaded machine may pause between reads
        # until the checkpoint's time as the clock read it, not reviveInterval (60 s)
        assert expiry_ms - after_ms - 50 <= wait_s * 1000 <= expiry_ms - now_ms + 50
        await asyncio.sleep(wait_s)
        await revive.revive_queue(queue)
        assert queue.pending == {}
        await c.dispatched()  # the copies are put to the retry topic: a pop sees them dispatched
        assert sum(revive.retry_messages_total.values()) == COUNT
        response, again = await raw.pop(
            c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=INVISIBLE_MS,
            max_nums=COUNT, poll_ms=2000,
        )  # fmt: skip
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert [p.msg.body for p in again] == [f"m{i}".encode() for i in range(COUNT)]
        assert {p.msg.reconsume_times for p in again} == {1}


async def test_a_filtered_checkpoint_spanning_more_than_one_read_comes_back_whole(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as c:
        for i in range(40):  # A at the even offsets: 20 matches over offsets 0..38
            await c.send_raw(TOPIC, f"m{i}".encode(), tags="A" if i % 2 == 0 else "B")
        _, popped = await raw.pop(
            c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=1000,
            max_nums=COUNT, exp="A", exp_type="TAG",
        )  # fmt: skip
        assert [p.msg.queue_offset for p in popped] == list(range(0, 40, 2))
        revive = c.broker.pop_service.revive
        await read_checkpoint(revive)
        await asyncio.sleep(revive._next_round_s())
        await revive.revive_queue(revive.queues[0])
        assert revive.queues[0].pending == {}
        await c.dispatched()  # the copies are put to the retry topic: a pop sees them dispatched
        response, again = await raw.pop(
            c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=INVISIBLE_MS,
            max_nums=COUNT, poll_ms=2000, exp="A", exp_type="TAG",
        )  # fmt: skip
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert sorted(p.msg.body for p in again) == sorted(
            f"m{i}".encode() for i in range(0, 40, 2)
        )
        assert {p.msg.reconsume_times for p in again} == {1}
