"""The revive service (PopReviveService): a checkpoint read before its revive time is revived
at that time, not one ``reviveInterval`` later, and a whole checkpoint's un-acked messages come
back in one round, each once, with reconsumeTimes + 1."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rocketq.response_code import ResponseCode
from rocketq.testing import pop as raw
from rocketq.testing.cluster import run_cluster
from rocketq.testing.store import small_store_properties

TOPIC = "PopRevive"
GROUP = "pop-revive"
INVISIBLE_MS = 3000
COUNT = 32


async def test_a_checkpoint_read_early_is_revived_at_its_time_with_all_its_messages(
    tmp_path: Path,
) -> None:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    # rounds of their own only every minute: this test drives the rounds
    async with run_cluster(
        tmp_path, store_properties=props, revive_interval_ms=60_000, revive_queue_num=1
    ) as c:
        await c.create_topic(TOPIC, queues=1)
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
        deadline = time.monotonic() + 5.0
        while not queue.pending and time.monotonic() < deadline:  # the ck arrives 1 s early
            await revive.revive_queue(queue)
            await asyncio.sleep(0.05)
        assert len(queue.pending) == 1
        now_ms = c.broker.message_store.now_ms()
        assert now_ms < expiry_ms
        wait_s = revive._next_round_s()
        assert abs(wait_s * 1000 - (expiry_ms - now_ms)) <= 50  # not reviveInterval (60 s)
        await asyncio.sleep(wait_s)
        await revive.revive_queue(queue)
        assert queue.pending == {}
        assert sum(revive.retry_messages_total.values()) == COUNT
        response, again = await raw.pop(
            c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=INVISIBLE_MS,
            max_nums=COUNT, poll_ms=2000,
        )  # fmt: skip
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert [p.msg.body for p in again] == [f"m{i}".encode() for i in range(COUNT)]
        assert {p.msg.reconsume_times for p in again} == {1}
