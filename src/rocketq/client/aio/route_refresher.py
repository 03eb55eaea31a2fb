"""RouteRefresher: read a topic's route again at once when a broker fails, never in a storm.

Theory of operation. RocketMQ's clients re-read routes only on the ``pollNameServerInterval``
timer (30 s, ``MQClientInstance.updateTopicRouteInfoFromNameServer``), so a client sees a new
master up to 30 s after it registers. Ours also re-reads a topic's route when a request to a
broker fails in a way a new route can cure (:func:`needs_route_refresh`): the connection was
refused or reset, the broker did not answer in time, or it answered that it takes no writes (a
slave's SERVICE_NOT_AVAILABLE, a fenced master's "in-sync replicas not enough").

Bounds, per topic:
- at most one request to the name server per window; a window is ``min_interval_s`` plus a
  random part up to ``jitter_s``, so the clients of a fleet that saw the same broker die drift
  apart instead of asking together at every window's edge;
- the first request waits a random ``0..first_delay_s`` for the same reason;
- callers that arrive while a request is in flight wait for that request (coalescing);
  callers that arrive later in the window return at once: the route they hold is that fresh.

A send whose master went silent (``await_change``) polls the route at that rate until the
route names another master or its time runs out: a controller elects a new master within its
heartbeat timeout, and the send goes there within a window of the registration.

Only failures call it: the send and pull paths pay nothing while brokers answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from rocketq.errors import (
    BrokerResponseError,
    NoPermissionError,
    RemotingConnectError,
    RemotingTimeoutError,
    RocketQError,
    ServiceNotAvailableError,
    SystemError_,
)

log = logging.getLogger(__name__)

MIN_INTERVAL_S = 0.1
JITTER_S = 0.1
FIRST_DELAY_S = 0.02

# remarks of a broker that takes no writes now but whose group may have another master
# (SendMessageProcessor: IN_SYNC_REPLICAS_NOT_ENOUGH -> SYSTEM_ERROR; a slave's store,
# DefaultMessageStore.checkStoreStatus, "message store is slave mode")
_NOT_MASTER_REMARKS = ("in-sync replicas not enough", "slave mode", "not master")
# AbstractSendMessageProcessor.msgCheck when the broker's permission has no write
# (wipeWritePerm drains a broker; its new route carries the change)
_BROKER_FORBIDDEN = "sending message is forbidden"


def needs_route_refresh(exc: BaseException) -> bool:
    """A failure that a fresher route may route around: refused or reset connections,
    timeouts, and answers that the broker takes no writes as things stand."""
    if isinstance(exc, RemotingConnectError | RemotingTimeoutError | ConnectionError):
        return True
    if isinstance(exc, TimeoutError):
        return True
    if not isinstance(exc, BrokerResponseError):
        return False
    if isinstance(exc, ServiceNotAvailableError):
        return True
    remark = exc.remark.lower()
    if isinstance(exc, SystemError_):
        return any(marker in remark for marker in _NOT_MASTER_REMARKS)
    if isinstance(exc, NoPermissionError):
        return remark.startswith("the broker[") and _BROKER_FORBIDDEN in remark
    return False


@dataclass(slots=True)
class _TopicState:
    next_allowed: float = float("-inf")
    in_flight: asyncio.Future[bool] | None = None


class RouteRefresher:
    """Rate-limited, coalescing ``fetch(topic)`` (the instance's ``update_topic_route``)."""

    def __init__(
        self,
        fetch: Callable[[str], Awaitable[bool]],
        *,
        min_interval_s: float = MIN_INTERVAL_S,
        jitter_s: float = JITTER_S,
        first_delay_s: float = FIRST_DELAY_S,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self._fetch = fetch
        self.min_interval_s = min_interval_s
        self.jitter_s = jitter_s
        self.first_delay_s = first_delay_s
        self._clock = clock
        self._rng = rng or random.Random()
        self._topics: dict[str, _TopicState] = {}
        self._tasks: set[asyncio.Task[bool]] = set()
        self.requests_count = 0  # requests made to the name server, for tests and stats
        self.skipped_count = 0  # calls answered by the window or by a request in flight

    def window_end(self, topic: str) -> float:
        """When the next request for ``topic`` may go out (on the refresher's clock)."""
        state = self._topics.get(topic)
        return state.next_allowed if state is not None else float("-inf")

    async def refresh_now(self, topic: str, timeout_s: float | None = None) -> bool:
        """Re-read ``topic``'s route unless it was read in this window; True when this call
        made or joined a request that found a route. Never raises: a failed refresh leaves
        the route as it was (the caller's own error is the one to report)."""
        future = self._start(topic)
        if future is None:
            return False
        try:
            async with asyncio.timeout(timeout_s):
                return await asyncio.shield(future)
        except TimeoutError:
            return False

    async def refresh_next_window(self, topic: str, timeout_s: float | None = None) -> bool:
        """:meth:`refresh_now` once this window is over: a second read, when the first may
        have come before the name server learnt of the failure."""
        await asyncio.sleep(max(0.0, self.window_end(topic) - self._clock()))
        return await self.refresh_now(topic, timeout_s)

    async def await_change(
        self,
        topic: str,
        current: Callable[[], str | None],
        old: str,
        timeout_s: float,
        gone: Callable[[], bool] | None = None,
    ) -> str | None:
        """Re-read ``topic``'s route, one request per window (``min_interval_s`` plus jitter),
        until ``current()`` names an address other than ``old`` (returned) or ``timeout_s``
        passes (None): a send whose master went silent resends as soon as the route names
        its successor, at the refresher's bounded rate however many sends wait. When
        ``gone()`` says the group is no longer in the route at all (it unregistered, or the
        name server expired it), no successor will come: None at once."""
        deadline = self._clock() + timeout_s
        while True:
            now_addr = current()
            if now_addr is not None and now_addr != old:
                return now_addr
            if gone is not None and gone():
                return None
            left = deadline - self._clock()
            if left <= 0:
                return None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self.refresh_next_window(topic)

    def refresh_soon(self, topic: str) -> None:
        """:meth:`refresh_now` without waiting (when the caller has no time left)."""
        self._start(topic)

    def _start(self, topic: str) -> asyncio.Future[bool] | None:
        state = self._topics.setdefault(topic, _TopicState())
        if state.in_flight is not None and not state.in_flight.done():
            self.skipped_count += 1
            return state.in_flight
        now = self._clock()
        if now < state.next_allowed:
            self.skipped_count += 1
            return None
        state.next_allowed = now + self.min_interval_s + self._rng.uniform(0, self.jitter_s)
        task = asyncio.get_running_loop().create_task(self._run(topic, state))
        state.in_flight = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _run(self, topic: str, state: _TopicState) -> bool:
        try:
            if self.first_delay_s > 0:
                await asyncio.sleep(self._rng.uniform(0, self.first_delay_s))
            self.requests_count += 1
            return await self._fetch(topic)
        except (RocketQError, OSError) as exc:
            log.info("refreshing the route of %s failed: %r", topic, exc)
            return False
        finally:
            state.in_flight = None

    async def shutdown(self) -> None:
        tasks, self._tasks = list(self._tasks), set()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
