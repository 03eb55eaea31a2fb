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
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future

from rocketq.broker.store_future import when_store_future_done
from rocketq.store.commitlog_send import SendPut
from rocketq.store.message_store import MessageStore
from rocketq.store.message_writer import EachPutResult, PutRequest
from rocketq.store.results import PutMessageResult, PutMessageStatus

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

_FAILED = PutMessageResult(PutMessageStatus.UNKNOWN_ERROR)


class PutBatcher:
    def __init__(
        self, store: Callable[[], MessageStore], answer_group: AnswerGroup | None = None
    ) -> None:
        self._store = store
        self._answer_group = answer_group
        self._puts: list[PutRequest | SendPut] = []
        self._dones: list[PutDone] = []
        self._scheduled = False
        self.flushes = 0  # store calls made (a batch each), for tests and benches
        self.puts = 0

    def submit(self, put: PutRequest | SendPut, done: PutDone, *, flush_soon: bool = True) -> None:
        """Queue ``put``; ``done`` is called on the loop with its result. ``flush_soon=False``:
        the caller runs on a connection's reader, whose read-end hook flushes."""
        self._puts.append(put)
        self._dones.append(done)
        if flush_soon and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush_soon(self) -> None:
        """Flush once this loop iteration's reads are dispatched (the read-end hook): the
        puts of every connection read in the same iteration go to the store in one call."""
        if self._puts and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Put everything queued now (the scheduled end of an iteration)."""
        puts, dones = self._puts, self._dones
        self._puts, self._dones = [], []
        self._scheduled = False
        if not puts:
            return
        self.flushes += 1
        self.puts += len(puts)
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

    def _finish(
        self, each: EachPutResult, dones: list[PutDone], durable: Future[PutMessageStatus]
    ) -> None:
        """The waiting puts' answers, with the status of their flush (and replication)."""
        try:
            status = durable.result()
        except Exception:  # the store's failure becomes UNKNOWN_ERROR for every waiting put
            log.exception("waiting for the store failed")
            status = PutMessageStatus.UNKNOWN_ERROR
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


def _call(done: PutDone, result: PutMessageResult) -> None:
    try:
        done(result)
    except Exception:  # one caller's done callback must not stop the others'
        log.exception("answering a put failed")
