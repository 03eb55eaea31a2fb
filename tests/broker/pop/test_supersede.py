"""A check point superseded by a later one of the same messages (pop/supersede.py): the same
messages popped under a check point of an earlier term (A, never acked) and again under a
later one (B), then a new term's revive (a restart of the revive service, as a promotion
starts it). The later one revives what is not acknowledged; the older one revives only the
offsets no later check point covers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from rocketq.broker.pop.revive import PopReviveService
from rocketq.response_code import ResponseCode
from rocketq.testing import pop as raw
from rocketq.testing.cluster import Cluster, run_cluster
from rocketq.testing.store import small_store_properties

TOPIC = "PopSupersede"
GROUP = "pop-supersede"
INVISIBLE_MS = 1500  # >= 1 s: through the pop buffer and the timer wheel, as in production
COUNT = 4
DEADLINE_S = 8.0


@asynccontextmanager
async def cluster(tmp: Path) -> AsyncIterator[Cluster]:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    # rounds of their own only every minute: the tests drive the rounds
    async with run_cluster(
        tmp, store_properties=props, revive_interval_ms=60_000, revive_queue_num=1
    ) as c:
        await c.create_topic(TOPIC, queues=1)
        for i in range(COUNT):
            await c.send_raw(TOPIC, f"m{i}".encode())
        yield c


async def pop_written(c: Cluster, invisible_ms: int = INVISIBLE_MS) -> list[raw.Popped]:
    """Pop, then wait until the pop buffer wrote its check point to the revive log."""
    _, popped = await raw.pop(
        c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=invisible_ms,
        max_nums=COUNT,
    )  # fmt: skip
    buffer = c.broker.pop_service.buffer
    assert buffer is not None
    deadline = time.monotonic() + DEADLINE_S
    while buffer.held_count:
        assert time.monotonic() < deadline, "the pop buffer never wrote its check point"
        await asyncio.sleep(0.02)
    return popped


def reset_offset(c: Cluster, offset: int) -> None:
    """The consume offset a master that never learned of the first pop has."""
    c.broker.consumer_offset_manager.commit_offset("test", GROUP, TOPIC, 0, offset)


async def new_term(c: Cluster) -> PopReviveService:
    """The revive service started again, as a promotion (or a restart) starts it."""
    revive = c.broker.pop_service.revive
    await revive.shutdown()
    revive.start()
    return revive


def decided(revive: PopReviveService) -> int:
    return sum(revive.retry_messages_total.values()) + revive.supersede.superseded_total


async def revive_until(revive: PopReviveService, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        assert time.monotonic() < deadline, revive.retry_messages_total
        await revive.revive_queue(revive.queues[0])
        await asyncio.sleep(0.05)


async def popped_again(c: Cluster) -> list[bytes]:
    response, again = await raw.pop(
        c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=60_000,
        max_nums=32, poll_ms=500,
    )  # fmt: skip
    assert response.code in (ResponseCode.SUCCESS, ResponseCode.POLLING_TIMEOUT), response.remark
    assert {p.msg.reconsume_times for p in again} <= {1}
    return sorted(p.msg.body for p in again)


async def test_an_older_check_point_does_not_revive_what_a_later_acknowledged_one_covers(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as c:
        older = await pop_written(c)  # m0..m3 under A, never acknowledged
        assert len(older) == COUNT
        reset_offset(c, 2)
        later = await pop_written(c, invisible_ms=10_000)  # m2, m3 again under B
        assert [p.msg.body for p in later] == [b"m2", b"m3"]
        response = await raw.batch_ack(
            c.client, c.broker_addr, "broker-a", GROUP, TOPIC, [p.handle for p in later]
        )
        assert response.code == ResponseCode.SUCCESS, response.remark
        revive = await new_term(c)
        # A comes due while B is still in the timer wheel: found there
        await revive_until(revive, lambda: decided(revive) >= COUNT)
        assert revive.queues[0].pending == {}
        assert sum(revive.retry_messages_total.values()) == 2
        assert revive.supersede.superseded_total == 2
        assert await popped_again(c) == [b"m0", b"m1"]


async def test_an_older_check_point_does_not_revive_what_this_term_popped_and_acknowledged(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as c:
        await pop_written(c)  # m0..m3 under A, never acknowledged
        reset_offset(c, 0)
        revive = await new_term(c)  # a new master that never learned of A's pop
        later = await pop_written(c)
        response = await raw.batch_ack(
            c.client, c.broker_addr, "broker-a", GROUP, TOPIC, [p.handle for p in later]
        )
        assert response.code == ResponseCode.SUCCESS, response.remark
        await revive_until(revive, lambda: decided(revive) >= COUNT)
        assert sum(revive.retry_messages_total.values()) == 0
        assert revive.supersede.superseded_total == COUNT
        assert await popped_again(c) == []


async def test_the_later_check_point_revives_what_is_not_acknowledged_each_message_once(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path) as c:
        await pop_written(c)
        reset_offset(c, 0)
        await pop_written(c)  # the same four again, neither pop acknowledged
        revive = await new_term(c)
        await revive_until(revive, lambda: decided(revive) >= 2 * COUNT)
        assert sum(revive.retry_messages_total.values()) == COUNT
        assert revive.supersede.superseded_total == COUNT
        assert await popped_again(c) == [f"m{i}".encode() for i in range(COUNT)]
