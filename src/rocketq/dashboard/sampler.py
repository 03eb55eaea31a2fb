"""HistorySampler: the dashboard server's background task that samples the cluster every 10 s
into the ``HistoryStore`` (rocketmq-dashboard's ``DashboardCollectTask`` collects its TPS once
a minute the same way, whether anyone watches or not).

Series sampled (the names ``/api/history/...`` and the pages ask for):

    broker:<addr>:put, broker:<addr>:get   the broker's putTps / getTransferedTps (runtime info)
    topic:<name>:put                       messages in per second (its queues' max offsets)
    group:<name>:tps, group:<name>:lag     consumed per second (its committed offsets) and lag

System, retry and DLQ topics (and the cluster's and brokers' own names, its reply topic) are
left out of the topic series; a group is every group with a retry topic (as the groups page
lists them). A failed call skips that series for one tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING

from rocketq.common.topic import (
    REPLY_TOPIC_POSTFIX,
    RETRY_GROUP_TOPIC_PREFIX,
    is_dlq_topic,
    is_retry_topic,
    is_system_topic,
)
from rocketq.dashboard.history_store import HistoryStore
from rocketq.errors import RocketQError

if TYPE_CHECKING:
    from rocketq.admin import AsyncAdminClient

log = logging.getLogger(__name__)


def first_number(text: str | None) -> float | None:
    """The 10 s figure of a runtime TPS value (``"12.5 10.1 9.8"``)."""
    try:
        return float((text or "").split()[0])
    except (IndexError, ValueError):
        return None


class HistorySampler:
    """Every ``store.fine.step_s``: sample, add to the store, save it (off the event loop)."""

    def __init__(self, admin: AsyncAdminClient, store: HistoryStore) -> None:
        self.admin = admin
        self.store = store
        self.ticks = 0
        self._totals: dict[str, tuple[float, float]] = {}
        self._task: asyncio.Task[None] | None = None
        self._last_coarse_slot = -1

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.to_thread(self.store.save)

    async def _run(self) -> None:
        step = self.store.fine.step_s
        while True:
            try:
                await self.tick()
            except (RocketQError, OSError) as exc:  # the cluster is down: try again next tick
                log.warning("history sample failed: %s", exc)
            await asyncio.sleep(step - time.time() % step)  # on the slot boundary

    async def tick(self) -> None:
        now = time.time()
        values = await self.sample(now)
        self.store.add(values, now)
        coarse_slot, _ = self.store.coarse.slot_of(now)
        save_coarse = coarse_slot != self._last_coarse_slot
        self._last_coarse_slot = coarse_slot
        await asyncio.to_thread(self.store.save, coarse=save_coarse)
        self.ticks += 1

    def _rate(self, key: str, total: float, now: float) -> float | None:
        last = self._totals.get(key)
        self._totals[key] = (now, total)
        if last is None or now <= last[0]:
            return None
        return max(0.0, (total - last[1]) / (now - last[0]))

    async def sample(self, now: float) -> dict[str, float]:
        values: dict[str, float] = {}
        info = await self.admin.examine_broker_cluster_info()
        for data in info.broker_addr_table.values():
            for addr in data.broker_addrs.values():
                try:
                    kv = await self.admin.fetch_broker_runtime_stats(addr)
                except RocketQError:
                    continue
                for what, name in (("put", "putTps"), ("get", "getTransferedTps")):
                    figure = first_number(kv.get(name))
                    if figure is not None:
                        values[f"broker:{addr}:{what}"] = figure
        names = await self.admin.fetch_all_topic_list()
        # a broker registers its cluster's and its own name as topics (clusterTopicEnable),
        # and the cluster's reply topic (MixAll.getReplyTopic)
        own = set(info.cluster_addr_table) | set(info.broker_addr_table)
        own |= {f"{c}_{REPLY_TOPIC_POSTFIX}" for c in info.cluster_addr_table}
        for topic in sorted(names):
            if topic in own or is_system_topic(topic) or is_retry_topic(topic):
                continue
            if is_dlq_topic(topic):
                continue
            try:
                stats = await self.admin.examine_topic_stats(topic)
            except RocketQError:
                continue
            total = sum(off.max_offset for off in stats.offset_table.values())
            rate = self._rate(f"topic:{topic}", total, now)
            if rate is not None:
                values[f"topic:{topic}:put"] = rate
        for topic in sorted(names):
            if not is_retry_topic(topic):
                continue
            group = topic[len(RETRY_GROUP_TOPIC_PREFIX) :]
            try:
                consume = await self.admin.examine_consume_stats(group)
            except RocketQError:
                continue
            values[f"group:{group}:lag"] = float(consume.compute_total_diff())
            consumed = sum(max(0, w.consumer_offset) for w in consume.offset_table.values())
            rate = self._rate(f"group:{group}", consumed, now)
            if rate is not None:
                values[f"group:{group}:tps"] = rate
        return values
