"""PutBatcher: the sends of one event-loop iteration go to the store in one call.

A send processor that has checked a message submits its put with a callback and answers its
request when the callback runs. A connection's read schedules a flush once it has dispatched
its requests (a read-end hook, ``flush_soon``), so the puts of every connection read in the
same loop iteration (at sync 32, one send each) are stored by one flush, after the reads'
callbacks; the first put of an iteration submitted elsewhere schedules it too. A flush hands
every put submitted until then to ``MessageStore.async_put_each``: one put lock, one reput
wake-up, and for the puts that wait for the store (SYNC_FLUSH, SYNC_MASTER) one group-commit
request up to the last byte. Each put still gets its own result: a put the store refuses
(illegal, no mapped file, disk full) is answered with its own status, the others are
unaffected. A store call that raises
answers every put of that flush with UNKNOWN_ERROR (refuse, never drop). A done callback
that is a ``GroupedDone`` is answered together with the others of its flush (or of its group
commit) by the ``answer_group`` the batcher was given: the broker's single sends, whose replies
``send_answer.SendAnswers`` builds in one native call.

The sends lane (issue 22, lever 1): a single send C read into a ``SendPut`` is queued with
``submit_send`` and its ``DeferredReply`` alone, no callback object. A flush whose puts are
all such sends (the common one) goes to ``MessageStore.async_put_sends`` and hands C's figures
(``SendsPutResult``) straight to the lane's ``answer_sends``: no result object, no pair, no
callback a put. A flush that mixes them with other puts keeps their order and goes the
general way, each lane send wrapped in the lane's ``grouped`` done callback. On the common
store, where no put waits once appended (an ASYNC_MASTER flushing in the background:
``store.sends_now``), such a flush is one step: ``put_sends_now``'s four
ints a put straight to the lane's ``answer_now``, no result tuple, no future, no call layer
between the put and the answers (``flush_now``: False sends every lane flush the reference
way, ``async_put_sends``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Protocol, cast

from rocketq.broker.long_polling import LoopDispatchScheduler
from rocketq.broker.store_future import when_store_future_done
from rocketq.common import native_record
from rocketq.remoting.channel import DeferredReply
from rocketq.store.commitlog_send import SendPut, SendsPutResult
from rocketq.store.message_store import MessageStore
from rocketq.store.message_writer import EachPutResult, PutRequest
from rocketq.store.results import PutMessageResult, PutMessageStatus
from rocketq.store.sends_now import put_sends_now

log = logging.getLogger(__name__)

PutDone = Callable[[PutMessageResult], None]


class GroupedDone:
    """A done callback a flush may answer together with the others (``answer_group``);
    called alone, it calls ``alone``."""

    __slots__ = ("alone",)

    def __init__(self, alone: PutDone) -> None:
        self.alone = alone

    def __call__(self, result: PutMessageResult) -> None:
        self.alone(result)


AnswerGroup = Callable[[list[tuple[GroupedDone, PutMessageResult]]], None]


class SendLane(Protocol):
    """Who answers the sends queued with ``submit_send`` (``send_answer.SendAnswers``)."""

    def answer_sends(
        self,
        deferreds: list[DeferredReply],
        puts: list[SendPut],
        result: SendsPutResult,
        indexes: Sequence[int],
        status: PutMessageStatus,
    ) -> None:
        """Answer the puts at ``indexes`` (``status``: the final status of appended ones)."""

    def answer_failed(self, deferreds: list[DeferredReply], puts: list[SendPut]) -> None:
        """Answer every put with UNKNOWN_ERROR (the store call raised)."""

    def grouped(self, deferred: DeferredReply, put: SendPut) -> GroupedDone:
        """The done callback of a lane send in a flush that goes the general way."""

    def answer_now(
        self,
        deferreds: list[DeferredReply],
        puts: list[SendPut],
        values: list[int],
        now_ms: int,
        prefix: str,
    ) -> None:
        """Answer every put of a flush ``put_sends_now`` stored (none waits)."""


_FAILED = PutMessageResult(PutMessageStatus.UNKNOWN_ERROR)


class PutBatcher:
    def __init__(
        self,
        store: Callable[[], MessageStore],
        answer_group: AnswerGroup | None = None,
        lane: SendLane | None = None,
    ) -> None:
        self._store = store
        self._answer_group = answer_group
        self._lane = lane
        self._puts: list[PutRequest | SendPut] = []
        self._dones: list[PutDone | DeferredReply] = []
        self._lane_count = 0  # of the queued puts, the lane's (submit_send)
        self._scheduled = False
        # the loop the flushes run on, kept: asyncio.get_running_loop costs a getpid syscall
        # on 3.11, once a flush at sync 1
        self._loop: asyncio.AbstractEventLoop | None = None
        self.flushes = 0  # store calls made (a batch each), for tests and benches
        self.puts = 0
        self.lane_flushes = 0  # of them, flushes of lane sends alone (async_put_sends)
        self.now_flushes = 0  # of those, put in one step (put_sends_now)
        # False: every lane flush takes async_put_sends (the reference), for tests and benches
        self.flush_now = True

    def submit(self, put: PutRequest | SendPut, done: PutDone, *, flush_soon: bool = True) -> None:
        """Queue ``put``; ``done`` is called on the loop with its result. ``flush_soon=False``:
        the caller runs on a connection's reader, whose read-end hook flushes."""
        self._puts.append(put)
        self._dones.append(done)
        if flush_soon and not self._scheduled:
            self._schedule()

    def submit_send(self, put: SendPut, deferred: DeferredReply) -> None:
        """Queue a single send C read, answered by the lane (the batcher must have one); the
        caller runs on a connection's reader, whose read-end hook flushes."""
        self._puts.append(put)
        self._dones.append(deferred)
        self._lane_count += 1

    def flush_soon(self) -> None:
        """Flush once this loop iteration's reads are dispatched (the read-end hook): the
        puts of every connection read in the same iteration go to the store in one call."""
        if self._puts and not self._scheduled:
            self._schedule()

    def _schedule(self) -> None:
        self._scheduled = True
        loop = self._loop
        if loop is None or not loop.is_running():
            loop = self._loop = asyncio.get_running_loop()
        loop.call_soon(self.flush)

    def flush(self) -> None:
        """Put everything queued now (the scheduled end of an iteration)."""
        puts, dones = self._puts, self._dones
        self._puts, self._dones = [], []
        lane_count, self._lane_count = self._lane_count, 0
        self._scheduled = False
        if not puts:
            return
        # the dispatch run the puts schedule on the loop runs at this flush's end, after
        # its answers are written, instead of in the next loop iteration
        try:
            store: MessageStore | None = self._store()
        except RuntimeError:  # no store open: the flush below answers every put as failed
            store = None
        scheduler = store.reput_service.dispatch_scheduler if store is not None else None
        held = type(scheduler) is LoopDispatchScheduler and scheduler.hold()
        try:
            lane = self._lane
            if (
                lane_count != len(puts)
                or lane is None
                or store is None
                or not self.flush_now
                or native_record.RECORD is None
                or not self._flush_now(lane, store, puts, dones)  # type: ignore[arg-type]
            ):
                self._flush(puts, dones, lane_count)
        finally:
            if held:
                scheduler.release()  # type: ignore[union-attr]

    def _flush_now(
        self,
        lane: SendLane,
        store: MessageStore,
        puts: list[SendPut],
        deferreds: list[DeferredReply],
    ) -> bool:
        """A flush of lane sends alone in one step, where ``put_sends_now`` serves the store
        (no put waits): its figures straight to the lane's ``answer_now``, no result object;
        False (nothing done) where it does not."""
        try:
            put = put_sends_now(store, puts)
        except Exception:  # a failed put answers every waiter of the batch, never none
            log.exception("putting %d messages failed", len(puts))
            put = None
            _lane_call(lane.answer_failed, deferreds, puts)
        else:
            if put is None:
                return False
        self.flushes += 1
        self.puts += len(puts)
        self.lane_flushes += 1
        self.now_flushes += 1
        if put is not None:
            try:
                lane.answer_now(deferreds, puts, *put, store.commit_log.msg_id_prefix)
            except Exception:  # logged, as a done callback's failure
                log.exception("answering a flush's sends failed")
        return True

    def _flush(
        self,
        puts: list[PutRequest | SendPut],
        dones: list[PutDone | DeferredReply],
        lane_count: int,
    ) -> None:
        self.flushes += 1
        self.puts += len(puts)
        if lane_count:
            lane = self._lane
            assert lane is not None, "submit_send needs a lane"
            if lane_count == len(puts) and native_record.RECORD is not None:
                self._flush_sends(lane, cast(list[SendPut], puts), cast(list[DeferredReply], dones))
                return
            # mixed with other puts (or C off since): each lane send gets its done callback
            self._flush_each(puts, [_done_of(lane, d, p) for d, p in zip(dones, puts, strict=True)])
        else:
            self._flush_each(puts, cast(list[PutDone], dones))

    def _flush_each(self, puts: list[PutRequest | SendPut], dones: list[PutDone]) -> None:
        """The general way: ``async_put_each``, each put's result to its done callback."""
        try:
            each = self._store().async_put_each(puts)
        except Exception:  # a failed put answers every waiter of the batch, never none
            log.exception("putting %d messages failed", len(puts))
            for done in dones:
                _call(done, _FAILED)
            return
        durable = each.durable
        waiting = set(each.waiting)
        self._answer([(done, each.results[i]) for i, done in enumerate(dones) if i not in waiting])
        if durable is not None and waiting:
            if durable.done():
                self._finish(each, dones, durable)
            else:
                when_store_future_done(durable, lambda f: self._finish(each, dones, f))

    def _flush_sends(
        self, lane: SendLane, puts: list[SendPut], deferreds: list[DeferredReply]
    ) -> None:
        """A flush of lane sends alone: C's figures straight to the lane's answers."""
        self.lane_flushes += 1
        try:
            result = self._store().async_put_sends(puts)
        except Exception:  # a failed put answers every waiter of the batch, never none
            log.exception("putting %d messages failed", len(puts))
            _lane_call(lane.answer_failed, deferreds, puts)
            return
        durable = result.durable
        ok = PutMessageStatus.PUT_OK
        if durable is None:
            _lane_call(lane.answer_sends, deferreds, puts, result, range(len(puts)), ok)
            return
        waiting = set(result.waiting)
        now = [i for i in range(len(puts)) if i not in waiting]
        if now:
            _lane_call(lane.answer_sends, deferreds, puts, result, now, ok)
        if durable.done():
            self._finish_sends(lane, deferreds, puts, result, durable)
        else:
            when_store_future_done(
                durable, lambda f: self._finish_sends(lane, deferreds, puts, result, f)
            )

    def _finish_sends(
        self,
        lane: SendLane,
        deferreds: list[DeferredReply],
        puts: list[SendPut],
        result: SendsPutResult,
        durable: Future[PutMessageStatus],
    ) -> None:
        """The waiting lane sends' answers, with the status of their flush (and replication)."""
        status = _durable_status(durable)
        _lane_call(lane.answer_sends, deferreds, puts, result, result.waiting, status)

    def _finish(
        self, each: EachPutResult, dones: list[PutDone], durable: Future[PutMessageStatus]
    ) -> None:
        """The waiting puts' answers, with the status of their flush (and replication)."""
        status = _durable_status(durable)
        self._answer(
            [
                (dones[i], PutMessageResult(status, each.results[i].append_result))
                for i in each.waiting
            ]
        )

    def _answer(self, answers: list[tuple[PutDone, PutMessageResult]]) -> None:
        """Each done with its result; the GroupedDones together by ``answer_group``."""
        answer_group = self._answer_group
        group: list[tuple[GroupedDone, PutMessageResult]] = []
        for done, result in answers:
            if answer_group is not None and isinstance(done, GroupedDone):
                group.append((done, result))
            else:
                _call(done, result)
        if group:
            assert answer_group is not None
            try:
                answer_group(group)
            except Exception:  # the group's answers are logged, as one done callback's
                log.exception("answering %d puts failed", len(group))


def _done_of(lane: SendLane, done: PutDone | DeferredReply, put: PutRequest | SendPut) -> PutDone:
    """A queued put's done callback on the general way (a lane send's from the lane)."""
    if type(done) is DeferredReply:
        assert isinstance(put, SendPut)
        return lane.grouped(done, put)
    return done  # type: ignore[return-value]


def _lane_call(answer: Callable[..., None], *args: object) -> None:
    try:
        answer(*args)
    except Exception:  # logged, as a done callback's failure
        log.exception("answering a flush's sends failed")


def _call(done: PutDone, result: PutMessageResult) -> None:
    try:
        done(result)
    except Exception:  # one caller's done callback must not stop the others'
        log.exception("answering a put failed")


def _durable_status(durable: Future[PutMessageStatus]) -> PutMessageStatus:
    """The status of a flush (and replication); the store's failure becomes UNKNOWN_ERROR for
    every waiting put."""
    try:
        return durable.result()
    except Exception:  # logged; each waiting put is answered UNKNOWN_ERROR
        log.exception("waiting for the store failed")
        return PutMessageStatus.UNKNOWN_ERROR
