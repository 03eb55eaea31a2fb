"""RebalanceImpl: which queues this consumer holds, and a ProcessQueue for each.

Theory of operation (RebalanceImpl.java): for each subscribed topic, clustering asks a broker
for the group's client ids (GET_CONSUMER_LIST_BY_GROUP) and runs the allocate strategy over the
topic's readable queues; broadcasting takes them all. Queues no longer assigned are dropped
(their pull loops stop, the offset is persisted, orderly locks are released); new ones get a
ProcessQueue, a start offset (``compute_pull_from_where``) and a pull loop, started through the
consumer's hooks. Orderly consumers lock a queue on the broker before taking it.
"""

from __future__ import annotations

import logging
import random
import time
from collections import defaultdict
from typing import Protocol

from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.aio.offset_store import OFFSET_NOT_FOUND, OffsetStore, ReadOffsetType
from rocketq.client.aio.route_refresher import needs_route_refresh
from rocketq.client.allocate_strategy import AllocateMessageQueueStrategy
from rocketq.client.config import ConsumerConfig
from rocketq.client.process_queue import ProcessQueue
from rocketq.common.message import MessageQueue
from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX
from rocketq.errors import RocketQError
from rocketq.remoting.protocol.bodies import ConsumeFromWhere, MessageModel
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.remoting.protocol.topic_route import MASTER_ID

# our own generator: threads of a library must not draw from (or disturb) the global
# random state an application seeds
_random = random.Random()

log = logging.getLogger(__name__)


async def compute_pull_from_where(
    instance: MQClientInstance, store: OffsetStore, config: ConsumerConfig, mq: MessageQueue
) -> int:
    """RebalancePushImpl.computePullFromWhere; -1: do not start the queue."""
    store.remove_offset(mq)
    last = await store.read_offset(mq, ReadOffsetType.READ_FROM_STORE)
    if last >= 0:
        return last
    if last != OFFSET_NOT_FOUND:
        return -1
    where = config.consume_from_where
    if mq.topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return 0
    if where is ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
        return 0
    try:
        addr = await instance.find_broker_addr_or_refresh(mq.broker_name, mq.topic)
        if where is ConsumeFromWhere.CONSUME_FROM_TIMESTAMP:
            return await instance.api.search_offset(addr, mq, config.consume_timestamp_ms)
        return await instance.api.get_max_offset(addr, mq)
    except (RocketQError, OSError) as exc:
        log.warning("no start offset for %s: %r", mq, exc)
        return -1


class RebalanceHooks(Protocol):
    async def remove_unnecessary_message_queue(
        self, mq: MessageQueue, pq: ProcessQueue
    ) -> bool: ...
    async def compute_pull_from_where(self, mq: MessageQueue) -> int: ...
    def dispatch_pull_request(self, mq: MessageQueue, pq: ProcessQueue, offset: int) -> None: ...


class RebalanceImpl:
    def __init__(
        self,
        instance: MQClientInstance,
        group: str,
        model: MessageModel,
        strategy: AllocateMessageQueueStrategy,
        hooks: RebalanceHooks,
    ) -> None:
        self.instance = instance
        self.group = group
        self.model = model
        self.strategy = strategy
        self.hooks = hooks
        self.process_queue_table: dict[MessageQueue, ProcessQueue] = {}
        self.topic_subscribe_info_table: dict[str, set[MessageQueue]] = {}
        self.subscription_inner: dict[str, SubscriptionData] = {}
        self.lock_max_live_time_s = 30.0

    async def do_rebalance(self, *, is_order: bool) -> None:
        for topic in list(self.subscription_inner):
            try:
                await self._rebalance_by_topic(topic, is_order=is_order)
            except (RocketQError, OSError) as exc:
                log.warning("rebalance of %s/%s failed: %r", self.group, topic, exc)
        for mq, pq in list(self.process_queue_table.items()):
            if mq.topic not in self.subscription_inner:
                pq.dropped = True
                self.process_queue_table.pop(mq, None)

    async def _rebalance_by_topic(self, topic: str, *, is_order: bool) -> None:
        mq_set = self.topic_subscribe_info_table.get(topic)
        if mq_set is None:
            await self.instance.update_topic_route(topic)
            mq_set = self.topic_subscribe_info_table.get(topic)
        if mq_set is None:
            return
        if self.model is MessageModel.BROADCASTING:
            allocated = set(mq_set)
        else:
            cids = await self.find_consumer_id_list(topic)
            if not cids:
                return
            allocated = set(
                self.strategy.allocate(self.group, self.instance.client_id, sorted(mq_set), cids)
            )
        await self.update_process_queue_table(topic, allocated, is_order=is_order)

    async def find_consumer_id_list(self, topic: str) -> list[str]:
        route = self.instance.topic_route_table.get(topic)
        if route is None:
            await self.instance.update_topic_route(topic)
            route = self.instance.topic_route_table.get(topic)
        if route is None or not route.broker_datas:
            return []
        broker = _random.choice(route.broker_datas)
        addr = broker.select_broker_addr()
        if addr is None:
            return []
        try:
            return await self.instance.api.get_consumer_id_list(addr, self.group)
        except (RocketQError, OSError) as exc:
            if not needs_route_refresh(exc):
                raise
            # that broker is gone or moved: ask another of the route read again now
            await self.instance.refresh_now(topic)
            route = self.instance.topic_route_table.get(topic)
            others = [
                other
                for bd in (route.broker_datas if route is not None else [])
                if (other := bd.select_broker_addr()) is not None and other != addr
            ]
            if not others:
                raise
            return await self.instance.api.get_consumer_id_list(_random.choice(others), self.group)

    async def update_process_queue_table(
        self, topic: str, mq_set: set[MessageQueue], *, is_order: bool
    ) -> bool:
        changed = False
        for mq, pq in list(self.process_queue_table.items()):
            if mq.topic == topic and mq not in mq_set:
                pq.dropped = True
                if await self.hooks.remove_unnecessary_message_queue(mq, pq):
                    self.process_queue_table.pop(mq, None)
                    changed = True
        for mq in sorted(mq_set - set(self.process_queue_table)):
            if is_order and not await self.lock(mq):
                continue
            offset = await self.hooks.compute_pull_from_where(mq)
            if offset < 0 or mq in self.process_queue_table:
                continue
            pq = ProcessQueue()
            if is_order:
                pq.locked, pq.last_lock_monotonic = True, time.monotonic()
            self.process_queue_table[mq] = pq
            self.hooks.dispatch_pull_request(mq, pq, offset)
            changed = True
        return changed

    # ------------------------------------------------------------------ orderly locks

    def _master_addr(self, broker_name: str) -> str | None:
        return (self.instance.broker_addr_table.get(broker_name) or {}).get(MASTER_ID)

    async def lock(self, mq: MessageQueue) -> bool:
        addr = self._master_addr(mq.broker_name)
        if addr is None:
            return False
        try:
            locked = await self.instance.api.lock_batch_mq(
                addr, self.group, self.instance.client_id, [mq]
            )
        except (RocketQError, OSError) as exc:
            log.warning("lock of %s failed: %r", mq, exc)
            return False
        pq = self.process_queue_table.get(mq)
        if pq is not None and mq in locked:
            pq.locked, pq.last_lock_monotonic = True, time.monotonic()
        return mq in locked

    async def lock_all(self) -> None:
        for broker_name, mqs in self._by_broker().items():
            addr = self._master_addr(broker_name)
            if addr is None:
                continue
            try:
                locked = await self.instance.api.lock_batch_mq(
                    addr, self.group, self.instance.client_id, mqs
                )
            except (RocketQError, OSError) as exc:
                log.warning("lock of %s queues failed: %r", broker_name, exc)
                continue
            now = time.monotonic()
            for mq in mqs:
                pq = self.process_queue_table.get(mq)
                if pq is not None:
                    pq.locked = mq in locked
                    if pq.locked:
                        pq.last_lock_monotonic = now

    async def unlock(self, mqs: list[MessageQueue]) -> None:
        by_broker: dict[str, list[MessageQueue]] = defaultdict(list)
        for mq in mqs:
            by_broker[mq.broker_name].append(mq)
        for broker_name, group in by_broker.items():
            addr = self._master_addr(broker_name)
            if addr is None:
                continue
            try:
                await self.instance.api.unlock_batch_mq(
                    addr, self.group, self.instance.client_id, group
                )
            except (RocketQError, OSError) as exc:
                log.warning("unlock of %s queues failed: %r", broker_name, exc)

    def _by_broker(self) -> dict[str, list[MessageQueue]]:
        out: dict[str, list[MessageQueue]] = defaultdict(list)
        for mq in sorted(self.process_queue_table):
            out[mq.broker_name].append(mq)
        return out

    def lock_valid(self, pq: ProcessQueue) -> bool:
        return pq.locked and time.monotonic() - pq.last_lock_monotonic < self.lock_max_live_time_s
