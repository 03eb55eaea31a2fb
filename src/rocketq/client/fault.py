"""Queue selection for sends: TopicPublishInfo round-robin, MQFaultStrategy, LatencyFaultTolerance.

Theory of operation (MQFaultStrategy, 4.9.x): every send reports its broker's latency; a latency
at or above ``LATENCY_MAX_MS[i]`` makes that broker unavailable for ``NOT_AVAILABLE_DURATION_MS[i]``
and a failed send counts as 30 s of latency (isolation). Selection walks the topic's write
queues round-robin and takes the first on an available broker; when none is, it picks one of the
better half of the known-bad brokers (``pick_one_at_least``). Without fault tolerance a retry
simply avoids the broker that failed last.
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field

from rocketq.common.message import MessageQueue

# our own generator: threads of a library must not draw from (or disturb) the global
# random state an application seeds
_random = random.Random()

LATENCY_MAX_MS = (50, 100, 550, 1000, 2000, 3000, 15000)
NOT_AVAILABLE_DURATION_MS = (0, 0, 30000, 60000, 120000, 180000, 600000)
ISOLATION_LATENCY_MS = 30000


def _monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


@dataclass(slots=True)
class TopicPublishInfo:
    message_queue_list: list[MessageQueue] = field(default_factory=list)
    order_topic: bool = False
    have_topic_router_info: bool = False
    _send_which_queue: itertools.count[int] = field(
        default_factory=lambda: itertools.count(_random.randrange(1 << 16))
    )

    def ok(self) -> bool:
        return bool(self.message_queue_list)

    def next_index(self) -> int:
        return next(self._send_which_queue)

    def select_one_message_queue(self, last_broker_name: str | None = None) -> MessageQueue:
        queues = self.message_queue_list
        if last_broker_name is not None:
            start = self.next_index()
            for i in range(len(queues)):
                mq = queues[(start + i) % len(queues)]
                if mq.broker_name != last_broker_name:
                    return mq
        return queues[self.next_index() % len(queues)]

    def queue_count_of_broker(self, broker_name: str) -> int:
        return sum(1 for mq in self.message_queue_list if mq.broker_name == broker_name)


@dataclass(slots=True)
class FaultItem:
    name: str
    current_latency_ms: int
    start_timestamp_ms: int

    def is_available(self, now_ms: int) -> bool:
        return now_ms >= self.start_timestamp_ms


class LatencyFaultTolerance:
    def __init__(self) -> None:
        self._items: dict[str, FaultItem] = {}

    def update_fault_item(self, name: str, latency_ms: int, not_available_ms: int) -> None:
        self._items[name] = FaultItem(name, latency_ms, _monotonic_ms() + not_available_ms)

    def is_available(self, name: str) -> bool:
        item = self._items.get(name)
        return item is None or item.is_available(_monotonic_ms())

    def remove(self, name: str) -> None:
        self._items.pop(name, None)

    def pick_one_at_least(self) -> str | None:
        """A broker from the better half of the known ones (available first, then latency)."""
        if not self._items:
            return None
        now = _monotonic_ms()
        items = sorted(
            self._items.values(),
            key=lambda it: (not it.is_available(now), it.current_latency_ms, it.start_timestamp_ms),
        )
        half = max(1, len(items) // 2)
        return items[_random.randrange(half)].name


class MQFaultStrategy:
    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.fault_tolerance = LatencyFaultTolerance()

    def select_one_message_queue(
        self, info: TopicPublishInfo, last_broker_name: str | None
    ) -> MessageQueue:
        if not self.enabled:
            return info.select_one_message_queue(last_broker_name)
        queues = info.message_queue_list
        start = info.next_index()
        for i in range(len(queues)):
            mq = queues[(start + i) % len(queues)]
            if self.fault_tolerance.is_available(mq.broker_name):
                return mq
        not_best = self.fault_tolerance.pick_one_at_least()
        if not_best is not None and not_best != last_broker_name:
            count = info.queue_count_of_broker(not_best)
            if count > 0:
                candidates = [mq for mq in queues if mq.broker_name == not_best]
                return candidates[info.next_index() % count]
            self.fault_tolerance.remove(not_best)
        return info.select_one_message_queue(last_broker_name)

    def update_fault_item(self, broker_name: str, latency_ms: int, *, isolation: bool) -> None:
        if self.enabled:
            latency = ISOLATION_LATENCY_MS if isolation else latency_ms
            self.fault_tolerance.update_fault_item(
                broker_name, latency_ms, compute_not_available_duration_ms(latency)
            )


def compute_not_available_duration_ms(latency_ms: int) -> int:
    if latency_ms < _FIRST_LIMIT_MS:  # every answered send that took under 50 ms
        return 0
    for limit, duration in _LIMITS_DOWN:
        if latency_ms >= limit:
            return duration
    return 0


_FIRST_LIMIT_MS = LATENCY_MAX_MS[0]
_LIMITS_DOWN = tuple(
    zip(reversed(LATENCY_MAX_MS), reversed(NOT_AVAILABLE_DURATION_MS), strict=True)
)


class SuspectMasters:
    """The master address of each broker group whose last send failed in a way a new route
    may cure (a refused or reset connection, a timeout, a "not master" answer).

    ``LatencyFaultTolerance`` isolates a broker *name*, which only helps when the topic has
    another group to send to; a send that must go to this group (its only group, a chosen
    queue, a message group) learns from this table that the address the route still names
    has just failed, and waits for the route to name a new master instead of waiting out a
    whole timeout on a silent one again (``Producer._send_to``). An address is suspect until a
    send to it succeeds or the route names another address for the group."""

    def __init__(self) -> None:
        self._addrs: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self._addrs)

    def suspect(self, broker_name: str, addr: str) -> None:
        self._addrs[broker_name] = addr

    def is_suspect(self, broker_name: str, addr: str) -> bool:
        return self._addrs.get(broker_name) == addr

    def clear(self, broker_name: str) -> None:
        self._addrs.pop(broker_name, None)
