"""The broker's single sends put in one step, for the common store (issue 22, lever 1).

``MessageWriter.async_put_sends`` serves every store: it checks the store's state, appends,
and for the puts that wait for the store makes the future of their group commit and
replication. On an ASYNC_MASTER whose commit log flushes in the background (the default
store) no put waits for anything once appended: ``sends_wait_for_none`` says so, and
``put_sends_now`` is ``async_put_sends`` for that store in one step, with no future and no
result object (the broker's flush hands its four ints a put straight to the answers). Every
other store, and a store that is not writable now, takes ``async_put_sends``, the reference.
"""

from __future__ import annotations

from operator import attrgetter

from rocketq.store.commitlog_send import SendPut, append_send_values, with_refused
from rocketq.store.config import BrokerRole
from rocketq.store.flush import FlushRealTimeService
from rocketq.store.message_writer import MessageWriter, legal_topic

_TOPIC, _QUEUE_ID, _BODY = attrgetter("topic"), attrgetter("queue_id"), attrgetter("body")
_SHORT_RUN = 8  # puts checked one by one (the checks of a whole run cost more below)


def sends_wait_for_none(writer: MessageWriter) -> bool:
    """True when ``put_sends_now`` serves ``writer`` now: running, writable, an ASYNC_MASTER
    (no replica to wait for, no in-sync check) flushing in the background (no group commit)."""
    return (
        writer._running
        and not writer.disk_full
        and writer.config.broker_role is BrokerRole.ASYNC_MASTER
        and type(writer.flush_service) is FlushRealTimeService
    )


def put_sends_now(writer: MessageWriter, puts: list[SendPut]) -> tuple[list[int], int] | None:
    """``async_put_sends`` where ``sends_wait_for_none(writer)`` (else None, nothing done;
    the caller takes ``async_put_sends``): the same checks (a put whose
    topic is illegal, whose queue id is negative or whose body is over the store's maximum
    gets MESSAGE_ILLEGAL), one append in one lock hold, one reput wake-up, and the same
    wake-ups (the flush service and the replicas for a put that does not wait, the replicas
    for one that does, as ``_handle_ha`` for an ASYNC_MASTER). Four ints a put, as
    ``commitlog_send.append_send_values``, and the store timestamp of the appended ones."""
    config = writer.config
    if (  # sends_wait_for_none's checks, inline
        not writer._running
        or writer.disk_full
        or config.broker_role is not BrokerRole.ASYNC_MASTER
        or type(writer.flush_service) is not FlushRealTimeService
    ):
        return None
    n = len(puts)
    limit = config.max_message_size
    if n == 1:  # a lone send (sync 1): the same steps, without the loops
        return _put_one(writer, puts[0], limit)
    appending = puts
    skip: set[int] = set()
    # the checks over a long run first (C-level loops), one by one when short or one fails
    if (
        n < _SHORT_RUN
        or not all(map(legal_topic, set(map(_TOPIC, puts))))
        or min(map(_QUEUE_ID, puts)) < 0
        or max(map(len, map(_BODY, puts))) > limit
    ):
        for i, put in enumerate(puts):
            if not legal_topic(put.topic) or put.queue_id < 0 or len(put.body) > limit:
                skip.add(i)
    if skip:
        appending = [put for i, put in enumerate(puts) if i not in skip]
    values: list[int] = []
    now = 0
    if appending:
        commit_log = writer.commit_log
        with commit_log.put_lock:
            now = commit_log.clock_ms()
            values = append_send_values(commit_log, appending, now)
        writer.reput_service.request_dispatch()  # after the append: it must find them
    if skip:  # the refused puts' figures in their places
        values = with_refused(values, n, skip)
    waits = woken = False
    for i in range(n):
        if values[4 * i]:
            continue
        if puts[i].wait_store_msg_ok:
            waits = True
        elif not woken:
            woken = True
            writer.flush_service.wakeup()
            writer.ha_service.wakeup_all()
    if waits and writer.ha_service.connections:  # _handle_ha's, for an ASYNC_MASTER
        writer.ha_service.wakeup_all()
    return values, now


def _put_one(writer: MessageWriter, put: SendPut, limit: int) -> tuple[list[int], int]:
    """``put_sends_now`` of one put (its checks done): the same check, append, wake-ups."""
    if not legal_topic(put.topic) or put.queue_id < 0 or len(put.body) > limit:
        return with_refused([], 1, {0}), 0
    commit_log = writer.commit_log
    with commit_log.put_lock:
        now = commit_log.clock_ms()
        values = append_send_values(commit_log, [put], now)
    writer.reput_service.request_dispatch()  # after the append: it must find them
    if values[0]:
        return values, now
    if put.wait_store_msg_ok:
        if writer.ha_service.connections:  # _handle_ha's, for an ASYNC_MASTER
            writer.ha_service.wakeup_all()
    else:
        writer.flush_service.wakeup()
        writer.ha_service.wakeup_all()
    return values, now
