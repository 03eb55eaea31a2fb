"""The push consumer's CPU from a pull answer's messages to the listener and back, in
isolation: ``ProcessQueue.put_message`` and ``ConsumeService.submit`` of one pulled batch with
an asyncio listener that returns at once (the latency row's consumer), then one loop
iteration (the batch's task ends there), ``time.thread_time`` a batch, best and median of 7
runs of 5,000:

    PYTHONPATH=<tree>/src .venv/bin/python bench/consume_submit_bench.py

Run it with each tree's ``src`` alternately for an A/B. The listener, the process queue and
the consume service are the real ones; the hooks (offset store, stats) are minimal stand-ins
so that only the consume service's own path is timed.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from rocketq.client.aio.consume_service import ConsumeService
from rocketq.client.config import PushConsumerConfig
from rocketq.client.process_queue import ProcessQueue
from rocketq.client.status import ConsumeStatus
from rocketq.common.message import MessageExt, MessageQueue

BATCHES = 5_000
RUNS = 7


class Hooks:
    """ConsumerHooks with nothing behind them."""

    def __init__(self) -> None:
        self.offset = -1

    def record_offset(self, mq: MessageQueue, offset: int) -> None:
        self.offset = offset

    async def send_message_back(self, msg: MessageExt, mq: MessageQueue) -> bool:
        return True

    def lock_valid(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        return True

    async def lock(self, mq: MessageQueue) -> bool:
        return True

    def record_consume(self, topic: str, rt_ms: float, ok: int, failed: int) -> None:
        pass


async def one_run(size: int) -> float:
    got = [0]

    async def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got[0] += len(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    config = PushConsumerConfig(consumer_group="BenchCG", consume_message_batch_max_size=size)
    hooks = Hooks()
    service = ConsumeService(config, listener, hooks, orderly=False)  # type: ignore[arg-type]
    mq = MessageQueue("BenchLatency", "broker-a", 0)
    pq = ProcessQueue()
    batches = [
        [MessageExt("BenchLatency", b"x" * 1024, queue_offset=i * size + j) for j in range(size)]
        for i in range(BATCHES)
    ]
    started = time.thread_time()
    for msgs in batches:
        dispatch = pq.put_message(msgs)
        service.submit(msgs, pq, mq, dispatch)
        await asyncio.sleep(0)  # the iteration where the batch's task ends
    spent = time.thread_time() - started
    assert got[0] == BATCHES * size, got
    assert hooks.offset == BATCHES * size, hooks.offset
    await service.shutdown(1.0)
    return spent / BATCHES * 1e6


async def main() -> None:
    for size in (1,):
        runs = [await one_run(size) for _ in range(RUNS)]
        print(
            f"{size} a batch: best {min(runs):.2f}  median {statistics.median(runs):.2f} us "
            "a batch (put_message, submit, the listener, one loop iteration)"
        )


if __name__ == "__main__":
    asyncio.run(main())
