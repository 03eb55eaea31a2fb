"""PullRequestHoldService: long polling for PULL_MESSAGE.

Theory of operation. A pull that finds no new message and carries the suspend bit is held
under ``topic@queueId`` with a deadline (the client's ``suspendTimeoutMillis``, or the short
polling time when long polling is off). It is re-executed exactly once, by whichever comes
first:

- a message arrives for that queue at an offset past the pull's offset and passes the pull's
  consume-queue filter and, when the store hands over the message's properties, its property
  filter (SQL92; ``notify_message_arriving``). The store calls
  ``notify_message_arriving_threadsafe`` from whichever thread dispatched the message: on the
  loop's own thread (the broker dispatches a put's records on its loop, see
  ``loop_dispatch_scheduler``) the held pulls are woken at once; from the reput thread the
  arrivals are queued and one ``call_soon_threadsafe`` carries every arrival queued until the
  loop takes them (one hop per run of records, not per record);
- the deadline passes (a timer per request, ``loop.call_later``).

Re-execution goes back to the pull processor through ``wakeup(request)``, which answers the
client on the request's channel (RocketMQ's ``executeRequestWhenWakeup``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.channel_writer import hold_answers, release_answers
from rocketq.remoting.eager_step import start_eagerly
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import PullMessageRequestHeader

log = logging.getLogger(__name__)

TOPIC_QUEUEID_SEPARATOR = "@"


@dataclass(slots=True, eq=False)
class PullRequest:
    channel: RemotingChannel
    request: RemotingCommand
    topic: str
    queue_id: int
    pull_from_this_offset: int
    timeout_ms: int
    # True when a message with this consume-queue tags code may match the subscription
    matches_tags_code: Callable[[int | None], bool] = field(default=lambda _code: True)
    # True when a message with these properties may match (the SQL92 selector, if any)
    matches_properties: Callable[[Mapping[str, str]], bool] = field(default=lambda _p: True)
    # the request's header as the processor parsed it when it held the pull (None: parse it
    # again on wake-up); the request does not change, so neither does its header
    header: PullMessageRequestHeader | None = None
    _timer: asyncio.TimerHandle | None = None
    _done: bool = False


Wakeup = Callable[[PullRequest], Awaitable[None]]
#: Answer a woken pull now: None when answered, else what is left to await (a read in a thread)
AnswerNow = Callable[[PullRequest], "Coroutine[Any, Any, None] | None"]
Arrival = tuple[str, int, int, "int | None", "Mapping[str, str] | None"]


class LoopDispatchScheduler:
    """The store's ``DispatchScheduler`` for a broker on ``loop``: a put's records are
    dispatched on the loop once its current iteration's callbacks ran (the puts of one
    iteration share the run), or at once, inside the put, while ``run_now()`` says so (pulls
    are held: they are answered before the put's own reply is written); from another thread
    through ``call_soon_threadsafe``.

    While a put batch's flush holds it (:meth:`hold`, ``PutBatcher.flush``), a run the loop
    would get later is kept and run by :meth:`release` at the flush's end, after the flush's
    answers were written: the same run, one loop iteration (and one ``epoll_wait``) less per
    flush, which is a lone send's whole path at sync 1. The flush's answers are held with
    it (``channel_writer.hold_answers``): a pull its puts wake is answered in the same writev
    as its connection's send replies (the latency phase's consumer and producer share one)."""

    __slots__ = ("_answers_held", "_held", "_holding", "_loop", "_loop_thread", "_run_now")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, run_now: Callable[[], bool] = lambda: False
    ) -> None:
        self._loop = loop
        self._run_now = run_now
        self._loop_thread = threading.get_ident()
        self._holding = False
        self._answers_held = False
        self._held: list[Callable[[], None]] = []

    def __call__(self, fn: Callable[[], None]) -> bool:
        loop = self._loop
        if loop.is_closed():
            return False
        try:
            if threading.get_ident() == self._loop_thread:
                if self._run_now():
                    fn()
                elif self._holding:
                    self._held.append(fn)
                else:
                    loop.call_soon(fn)
            else:
                loop.call_soon_threadsafe(fn)
        except RuntimeError:  # closed in between
            return False
        return True

    def hold(self) -> bool:
        """Keep the runs scheduled from now (on the loop's thread) for :meth:`release`;
        False (nothing held) off the loop's thread or when already holding."""
        if self._holding or threading.get_ident() != self._loop_thread:
            return False
        self._holding = True
        self._answers_held = hold_answers()
        return True

    def release(self) -> None:
        """Run the kept runs, in order (each logs its own failure, as a loop callback's),
        then write the woken pulls' answers still waiting for their connection's replies."""
        self._holding = False
        held, self._held = self._held, []
        try:
            for fn in held:
                try:
                    fn()
                except Exception:  # as the loop would: logged, the others still run
                    log.exception("a dispatch run failed")
        finally:
            if self._answers_held:
                self._answers_held = False
                release_answers()


def loop_dispatch_scheduler(
    loop: asyncio.AbstractEventLoop, run_now: Callable[[], bool] = lambda: False
) -> LoopDispatchScheduler:
    """The store's ``DispatchScheduler`` for a broker on ``loop``: a LoopDispatchScheduler."""
    return LoopDispatchScheduler(loop, run_now)


class PullRequestHoldService:
    def __init__(self, wakeup: Wakeup, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._wakeup = wakeup
        self._loop = loop
        self._table: dict[str, list[PullRequest]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False
        self._loop_thread: int | None = None
        self._arrivals: list[Arrival] = []
        self._arrivals_lock = threading.Lock()
        # the pulls each connection holds (the connections with our close listener)
        self._by_channel: dict[RemotingChannel, set[PullRequest]] = {}
        # the pull processor's answer of a pull an arrival wakes, without a coroutine when it
        # reads on the loop (None: ``wakeup`` as for a timeout)
        self.answer_now: AnswerNow | None = None

    @staticmethod
    def build_key(topic: str, queue_id: int) -> str:
        return f"{topic}{TOPIC_QUEUEID_SEPARATOR}{queue_id}"

    @property
    def has_held(self) -> bool:
        return bool(self._table)

    @property
    def held_count(self) -> int:
        return sum(len(v) for v in self._table.values())

    def held_pulls(self) -> list[PullRequest]:
        """The pulls held now (RocketMQ's ``pullRequestTable``, flattened), to inspect."""
        return [pull for held in self._table.values() for pull in held]

    def suspend_pull_request(self, pull: PullRequest) -> None:
        """Hold ``pull`` until a matching message arrives or its timeout passes."""
        loop = self._loop or asyncio.get_running_loop()
        self._loop = loop
        self._loop_thread = threading.get_ident()
        if self._stopped:
            self._fire(pull)
            return
        self._table.setdefault(self.build_key(pull.topic, pull.queue_id), []).append(pull)
        pull._timer = loop.call_later(max(pull.timeout_ms, 0) / 1000, self._fire, pull)
        of_channel = self._by_channel.get(pull.channel)
        if of_channel is not None:
            of_channel.add(pull)
        else:  # one close listener a connection, not a pull: a listener per pull kept
            # every answered pull until its connection closed
            self._by_channel[pull.channel] = {pull}
            pull.channel.add_close_listener(self._channel_closed)

    def notify_message_arriving(
        self,
        topic: str,
        queue_id: int,
        max_offset: int,
        tags_code: int | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> int:
        """Wake the held pulls this arrival satisfies; returns how many were woken."""
        held = self._table.get(self.build_key(topic, queue_id))
        if not held:
            return 0
        woken = [
            p
            for p in held
            if max_offset > p.pull_from_this_offset
            and p.matches_tags_code(tags_code)
            and (properties is None or p.matches_properties(properties))
        ]
        for pull in woken:
            self._fire(pull, eager=True)
        return len(woken)

    def notify_message_arriving_threadsafe(
        self,
        topic: str,
        queue_id: int,
        max_offset: int,
        tags_code: int | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        """The store's arriving listener: callable from any thread."""
        if threading.get_ident() == self._loop_thread:
            self.notify_message_arriving(topic, queue_id, max_offset, tags_code, properties)
            return
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._arrivals_lock:
            first = not self._arrivals
            self._arrivals.append((topic, queue_id, max_offset, tags_code, properties))
        if first:
            try:
                loop.call_soon_threadsafe(self._take_arrivals)
            except RuntimeError:  # the loop closed in between
                with self._arrivals_lock:
                    self._arrivals.clear()

    def _take_arrivals(self) -> None:
        with self._arrivals_lock:
            arrivals, self._arrivals = self._arrivals, []
        for topic, queue_id, max_offset, tags_code, properties in arrivals:
            if self._table:
                self.notify_message_arriving(topic, queue_id, max_offset, tags_code, properties)

    def _channel_closed(self, channel: RemotingChannel) -> None:
        """Drop the pulls ``channel`` holds (RocketMQ's hold service finds a closed
        channel's pulls when it checks them; here the close tells)."""
        for pull in self._by_channel.pop(channel, ()):
            self._forget(pull)

    def _forget(self, pull: PullRequest) -> None:
        pull._done = True
        if pull._timer is not None:
            pull._timer.cancel()
        of_channel = self._by_channel.get(pull.channel)
        if of_channel is not None:
            of_channel.discard(pull)
        key = self.build_key(pull.topic, pull.queue_id)
        held = self._table.get(key)
        if held is not None and pull in held:
            held.remove(pull)
            if not held:
                del self._table[key]

    def _fire(self, pull: PullRequest, *, eager: bool = False) -> None:
        """Re-execute ``pull``. ``eager`` (an arrival): its first step runs now, so a hot
        read is answered before the caller goes on (no task, no loop iteration); only what
        is left once it waits (a cold read in a thread, a full socket buffer) becomes a task.
        Timeouts and shutdown start a task as before."""
        if pull._done:
            return
        self._forget(pull)
        if pull.channel.is_closed:
            return
        assert self._loop is not None
        if eager and self.answer_now is not None:
            try:
                left = self.answer_now(pull)
            except Exception:  # as in _run: logged with its queue, the other pulls still woken
                log.exception("re-executing held pull of %s@%d failed", pull.topic, pull.queue_id)
                return
            if left is None:  # answered: no coroutine, no task
                return
            coro: Coroutine[Any, Any, None] = self._run_left(pull, left)
        else:
            coro = self._run(pull)
        task = start_eagerly(self._loop, coro) if eager else self._loop.create_task(coro)
        if task is None:
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, pull: PullRequest) -> None:
        try:
            await self._wakeup(pull)
        except Exception:  # one held pull's failure must not stop the others; logged with its queue
            log.exception("re-executing held pull of %s@%d failed", pull.topic, pull.queue_id)

    async def _run_left(self, pull: PullRequest, left: Coroutine[Any, Any, None]) -> None:
        try:
            await left
        except Exception:  # one left pull's failure must not stop the others; logged
            log.exception("re-executing held pull of %s@%d failed", pull.topic, pull.queue_id)

    async def shutdown(self) -> None:
        """Answer every held pull now (RocketMQ answers them at shutdown too), then wait."""
        self._stopped = True
        for held in list(self._table.values()):
            for pull in list(held):
                self._fire(pull)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
