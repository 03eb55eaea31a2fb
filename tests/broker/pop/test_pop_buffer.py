"""The pop buffer (PopBufferMergeService): a batch acked while its checkpoint is held writes no
revive record at all; a checkpoint held past its time is written with the acks it has; the
committed consume offset never passes a checkpoint that is neither written nor acked."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from rocketq.broker.pop import pop_buffer
from rocketq.common.extra_info import parse_extra_info
from rocketq.response_code import ResponseCode
from rocketq.store.timer.timer_hook import TIMER_TOPIC
from rocketq.testing import pop as raw
from rocketq.testing.cluster import Cluster, run_cluster
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until

TOPIC = "PopBuffer"
GROUP = "pop-buffer"
INVISIBLE_MS = 1500


@asynccontextmanager
async def cluster(tmp: Path) -> AsyncIterator[Cluster]:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    async with run_cluster(
        tmp, store_properties=props, revive_interval_ms=200, revive_queue_num=2
    ) as c:
        await c.create_topic(TOPIC, queues=1)
        for i in range(4):
            await c.send_raw(TOPIC, f"m{i}".encode())
        yield c


async def pop(c: Cluster, nums: int) -> list[raw.Popped]:
    response, popped = await raw.pop(
        c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=INVISIBLE_MS,
        max_nums=nums,
    )  # fmt: skip
    found = response.code == ResponseCode.SUCCESS
    assert found or response.code == ResponseCode.POLLING_TIMEOUT, response.remark
    return popped


async def batch_ack(c: Cluster, popped: list[raw.Popped]) -> None:
    handles = [p.handle for p in popped]
    r = await raw.batch_ack(c.client, c.broker_addr, "broker-a", GROUP, TOPIC, handles)
    assert r.code == ResponseCode.SUCCESS, r.remark


def revive_records(c: Cluster) -> int:
    """ck/ack/bAck records written: each is a timer message in the wheel topic first."""
    return c.broker.message_store.get_max_offset_in_queue(TIMER_TOPIC, 0)


def committed(c: Cluster) -> int:
    return c.broker.consumer_offset_manager.query_offset(GROUP, TOPIC, 0)


@pytest.fixture
def long_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints held for 30 s, so the test decides when each is resolved."""
    monkeypatch.setattr(pop_buffer, "CK_STAY_BUFFER_MS", 30_000)


async def test_a_batch_acked_while_held_writes_no_revive_record(
    tmp_path: Path, long_hold: None
) -> None:
    async with cluster(tmp_path) as c:
        popped = await pop(c, 4)
        assert [p.msg.body for p in popped] == [b"m0", b"m1", b"m2", b"m3"]
        assert committed(c) == 0  # the checkpoint is held: nothing durable covers m0..m3
        await batch_ack(c, popped)
        assert committed(c) == 4
        assert c.broker.pop_service.buffer.merged_total == 1
        assert revive_records(c) == 0
        assert await pop(c, 4) == []


async def test_the_commit_never_passes_a_held_checkpoint(tmp_path: Path, long_hold: None) -> None:
    async with cluster(tmp_path) as c:
        first = await pop(c, 2)
        second = await pop(c, 2)  # read on past the held first checkpoint
        assert [p.msg.body for p in first + second] == [b"m0", b"m1", b"m2", b"m3"]
        await batch_ack(c, second)
        assert committed(c) == 0  # the first batch is neither written nor acked
        await batch_ack(c, first[:1])
        assert committed(c) == 0
        await batch_ack(c, first[1:])
        assert committed(c) == 4
        assert revive_records(c) == 0


async def test_a_checkpoint_held_too_long_is_written_with_its_acks(tmp_path: Path) -> None:
    async with cluster(tmp_path) as c:
        popped = await pop(c, 4)
        await batch_ack(c, popped[:2])
        # the ck, then one bAck of m0 and m1; then the commit moves past the batch
        await until(lambda: revive_records(c) == 2 and committed(c) == 4, timeout_s=5.0)
        back: list[raw.Popped] = []
        deadline = time.monotonic() + (INVISIBLE_MS + 6_000) / 1000
        while len(back) < 2 and time.monotonic() < deadline:
            _, got = await raw.pop(
                c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=30_000,
                poll_ms=500,
            )  # fmt: skip
            back.extend(got)
        assert sorted(p.msg.body for p in back) == [b"m2", b"m3"]
        assert all(p.msg.reconsume_times == 1 for p in back)


async def test_a_whole_pop_acked_in_one_call_leaves_what_ack_now_leaves(
    tmp_path: Path, long_hold: None
) -> None:
    """PopService.ack_held_pop (the batch ack's common case in one call) against ack_now (the
    reference) on two pops of the same queue: the same spans acked, both checkpoints merged
    and forgotten, the offset committed past both, no record written; a second call (the
    checkpoint gone) declines without changing anything."""
    async with cluster(tmp_path) as c:
        service = c.broker.pop_service
        first, second = await pop(c, 2), await pop(c, 2)
        a, b = (parse_extra_info(p[0].handle) for p in (first, second))
        bn = "broker-a"
        # not a whole live pop: declined, nothing changed (ack_now decides those)
        assert not service.ack_held_pop(GROUP, TOPIC, 0, a.ck_queue_offset, 1, a.pop_time, bn)
        assert not service.ack_held_pop(GROUP, TOPIC, 0, a.ck_queue_offset, 2, a.pop_time - 1, bn)
        assert service.buffer.held_count == 2
        assert committed(c) == 0
        assert service.ack_held_pop(GROUP, TOPIC, 0, a.ck_queue_offset, 2, a.pop_time, bn)
        assert committed(c) == 2  # the second checkpoint still held
        done = service.ack_now(GROUP, TOPIC, b, [b.ck_queue_offset, b.ck_queue_offset + 1])
        assert done == [2, 3]
        assert committed(c) == 4
        assert service.buffer.merged_total == 2
        assert service.buffer.held_count == 0
        spans = service.inflight._queues[(GROUP, TOPIC, 0)].spans
        assert [(sp.start, sp.end, sp.acked) for sp in spans.values()] == [(0, 2, 3), (2, 4, 3)]
        assert not service.inflight._acked
        assert not service.ack_held_pop(GROUP, TOPIC, 0, a.ck_queue_offset, 2, a.pop_time, bn)
        assert revive_records(c) == 0
        await batch_ack(c, first)  # repeated with the same handles: still SUCCESS
