"""PopLongPollingService: a pop (or a NOTIFICATION) that found nothing is parked until a
message arrives or its poll time passes (RocketMQ 5's longpolling/PopLongPollingService).

Parked requests are keyed ``topic@group@queueId`` (queueId -1: every queue). An arrival on
``topic``/``queueId`` wakes, for every group parked on the topic, the requests of that queue and
of -1 whose filter may match; an arrival on a POP retry topic ``%RETRY%<group>_<topic>`` (or
``+``) wakes that group's requests on ``topic``. A woken request is re-run (``wakeup``): a pop
that still finds nothing parks again for the rest of its poll time, and answers
POLLING_TIMEOUT when that is over (NOTIFICATION answers at its first wake). More
than ``popPollingSize`` requests on one key, or more than ``popPollingMapSize`` keys, answer
POLLING_FULL instead of parking.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from rocketq.broker.config import BrokerConfig
from rocketq.common.extra_info import POP_RETRY_SEPARATOR_V1, POP_RETRY_SEPARATOR_V2
from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX
from rocketq.remoting.channel import RemotingChannel

log = logging.getLogger(__name__)


class PollingResult(enum.Enum):
    POLLING_SUC = "POLLING_SUC"
    POLLING_FULL = "POLLING_FULL"
    POLLING_TIMEOUT = "POLLING_TIMEOUT"
    NOT_POLLING = "NOT_POLLING"


@dataclass(slots=True, eq=False)
class PopRequest:
    channel: RemotingChannel
    topic: str
    group: str
    queue_id: int
    timeout_ms: int
    wakeup: Callable[[], Awaitable[None]]
    matches_tags_code: Callable[[int | None], bool] = field(default=lambda _code: True)
    matches_properties: Callable[[Mapping[str, str]], bool] = field(default=lambda _p: True)
    _timer: asyncio.TimerHandle | None = None
    _done: bool = False


def polling_key(topic: str, group: str, queue_id: int) -> str:
    """KeyBuilder.buildPollingKey."""
    return f"{topic}@{group}@{queue_id}"


class PopLongPollingService:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self._table: dict[str, list[PopRequest]] = {}
        self._groups_by_topic: dict[str, set[str]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._stopped = False
        # the requests each connection has parked (the connections with our close listener)
        self._by_channel: dict[RemotingChannel, set[PopRequest]] = {}

    @property
    def parked_count(self) -> int:
        return sum(len(v) for v in self._table.values())

    def polling(self, req: PopRequest) -> PollingResult:
        """Park ``req`` (POLLING_SUC), or say why not."""
        if req.timeout_ms <= 0 or self._stopped:
            return PollingResult.NOT_POLLING
        key = polling_key(req.topic, req.group, req.queue_id)
        held = self._table.get(key)
        if held is None and len(self._table) >= self.config.pop_polling_map_size:
            return PollingResult.POLLING_FULL
        if held is not None and len(held) >= self.config.pop_polling_size:
            return PollingResult.POLLING_FULL
        loop = asyncio.get_running_loop()
        self._loop, self._loop_thread = loop, threading.get_ident()
        self._table.setdefault(key, []).append(req)
        self._groups_by_topic.setdefault(req.topic, set()).add(req.group)
        req._timer = loop.call_later(req.timeout_ms / 1000, self._fire, req)
        of_channel = self._by_channel.get(req.channel)
        if of_channel is not None:
            of_channel.add(req)
        else:  # one close listener a connection: a listener a request kept every answered
            # request until its connection closed
            self._by_channel[req.channel] = {req}
            req.channel.add_close_listener(self._channel_closed)
        return PollingResult.POLLING_SUC

    def notify_message_arriving(
        self,
        topic: str,
        queue_id: int,
        tags_code: int | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> int:
        """Wake the parked requests this arrival may satisfy; how many were woken."""
        if not self._table:
            return 0
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            return self._notify_retry(topic)
        woken = 0
        for group in list(self._groups_by_topic.get(topic, ())):
            for qid in (queue_id, -1):
                for req in list(self._table.get(polling_key(topic, group, qid), ())):
                    if req.matches_tags_code(tags_code) and (
                        properties is None or req.matches_properties(properties)
                    ):
                        self._fire(req)
                        woken += 1
        return woken

    def notify_group(self, topic: str, group: str) -> int:
        """Wake every request of (topic, group), any queue (a retry message, an ack)."""
        woken = 0
        for key in [k for k in self._table if k.startswith(f"{topic}@{group}@")]:
            for req in list(self._table.get(key, ())):
                self._fire(req)
                woken += 1
        return woken

    def _notify_retry(self, retry_topic: str) -> int:
        rest = retry_topic[len(RETRY_GROUP_TOPIC_PREFIX) :]
        woken = 0
        for topic, groups in list(self._groups_by_topic.items()):
            for group in list(groups):
                if rest in (
                    f"{group}{POP_RETRY_SEPARATOR_V1}{topic}",
                    f"{group}{POP_RETRY_SEPARATOR_V2}{topic}",
                ):
                    woken += self.notify_group(topic, group)
        return woken

    def notify_message_arriving_threadsafe(
        self,
        topic: str,
        queue_id: int,
        tags_code: int | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        """The store's arriving listener: callable from any thread."""
        if not self._table:
            return
        if threading.get_ident() == self._loop_thread:
            self.notify_message_arriving(topic, queue_id, tags_code, properties)
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed in between
            loop.call_soon_threadsafe(
                self.notify_message_arriving, topic, queue_id, tags_code, properties
            )

    def _channel_closed(self, channel: RemotingChannel) -> None:
        """Drop the requests ``channel`` parked."""
        for req in self._by_channel.pop(channel, ()):
            self._forget(req)

    def _forget(self, req: PopRequest) -> None:
        req._done = True
        if req._timer is not None:
            req._timer.cancel()
        of_channel = self._by_channel.get(req.channel)
        if of_channel is not None:
            of_channel.discard(req)
        key = polling_key(req.topic, req.group, req.queue_id)
        held = self._table.get(key)
        if held is not None and req in held:
            held.remove(req)
            if not held:
                del self._table[key]
                if not any(k.startswith(f"{req.topic}@{req.group}@") for k in self._table):
                    groups = self._groups_by_topic.get(req.topic)
                    if groups is not None:
                        groups.discard(req.group)
                        if not groups:
                            del self._groups_by_topic[req.topic]

    def _fire(self, req: PopRequest) -> None:
        if req._done:
            return
        self._forget(req)
        if req.channel.is_closed or self._loop is None:
            return
        task = self._loop.create_task(self._run(req))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, req: PopRequest) -> None:
        try:
            await req.wakeup()
        except Exception:  # one parked pop's failure must not stop the others
            log.exception("re-running parked pop of %s (%s) failed", req.topic, req.group)

    async def shutdown(self) -> None:
        """Answer every parked request now, then wait for the answers."""
        self._stopped = True
        for held in list(self._table.values()):
            for req in list(held):
                self._fire(req)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
