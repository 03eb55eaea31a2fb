"""The broker's pass-through single sends appended by C (issue 22, lever 1).

A ``SendPut`` is a single send whose record properties are the producer's string passed
through (the broker's ``send_properties``). ``append_sends`` appends a run of them, under the
``CommitLog`` put lock its caller holds, with one call of ``rocketq._native._record``'s
``append_sends`` per commitlog file: C writes each record in place in the mapped file (the
encode of ``message_decoder.encode_message`` and the patch and copy of
``CommitLog._append_locked`` in one step) and stops before a record that does not fit with
the blank's 8 bytes to spare; the blank END_OF_FILE record, the roll to the next file and the
wrote position stay ``CommitLog``'s, as in ``_append_locked``. With C off the writer builds
the message and encodes it as any other put (``message_writer.message_of``), the reference.

``append_send_values`` gives C's figures as they are, four ints a put (``SEND_STATUSES``'
index, wrote offset, wrote bytes, queue offset): the broker's single sends go from them to
their replies without an object a put (``SendsPutResult``, ``send_answer.py``);
``append_sends`` makes them the per-put results of ``CommitLog.append_each``.
"""

from __future__ import annotations

import logging
from array import array
from concurrent.futures import Future
from typing import NamedTuple, Protocol

from rocketq.common import native_record
from rocketq.store.config import StoreConfig
from rocketq.store.mapped_file import MappedFile, MappedFileCreateError
from rocketq.store.mapped_file_queue import MappedFileQueue
from rocketq.store.results import (
    AppendMessageResult,
    AppendMessageStatus,
    PutMessageResult,
    PutMessageStatus,
)

log = logging.getLogger(__name__)


class SendPut(NamedTuple):
    """A single send whose record properties are the producer's string passed through (the
    broker's ``send_properties``): its fields as C encodes them (``append_sends``), the hosts
    as their 8 or 20 bytes (``message_id.host_to_bytes``)."""

    topic: str
    queue_id: int
    body: bytes
    properties: bytes
    flag: int
    sys_flag: int
    born_timestamp: int
    born_host: bytes
    store_host: bytes
    reconsume_times: int
    wait_store_msg_ok: bool


#: append_sends's per-put statuses (append.c) as the writer reports them
_SEND_STATUS = (None, PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, PutMessageStatus.MESSAGE_ILLEGAL)

#: a put's status in ``append_send_values``' figures: the index in this tuple (0, 1 and 2 are
#: append.c's; the others are the writer's: no mapped file made for the put, and its checks)
SEND_STATUSES = (
    PutMessageStatus.PUT_OK,
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED,
    PutMessageStatus.MESSAGE_ILLEGAL,
    PutMessageStatus.CREATE_MAPPED_FILE_FAILED,
    PutMessageStatus.SERVICE_NOT_AVAILABLE,
    PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH,
)
NO_MAPPED_FILE = SEND_STATUSES.index(PutMessageStatus.CREATE_MAPPED_FILE_FAILED)
ILLEGAL = SEND_STATUSES.index(PutMessageStatus.MESSAGE_ILLEGAL)


class SendsPutResult(NamedTuple):
    """``MessageStore.async_put_sends``' results: ``values`` holds four ints a put
    (``SEND_STATUSES``' index, wrote offset, wrote bytes, queue offset), ``now`` the store
    timestamp of the appended ones, ``msg_id_prefix`` the start of their msgIds. The puts at
    the indexes ``waiting`` asked to wait for the store and were appended: their final status
    is ``durable``'s once it completes (as ``EachPutResult``'s)."""

    values: list[int]
    now: int
    msg_id_prefix: str
    waiting: list[int]
    durable: Future[PutMessageStatus] | None

    def put_result(
        self, i: int, status: PutMessageStatus = PutMessageStatus.PUT_OK
    ) -> PutMessageResult:
        """Put ``i``'s result as ``async_put_each`` gives it (``status``: an appended put's
        final status)."""
        values = self.values
        k = 4 * i
        code = values[k]
        if code:
            return PutMessageResult(SEND_STATUSES[code])
        phy = values[k + 1]
        append = AppendMessageResult(
            AppendMessageStatus.PUT_OK,
            phy,
            values[k + 2],
            f"{self.msg_id_prefix}{phy:016X}",
            values[k + 3],
            self.now,
        )
        return PutMessageResult(status, append)


#: a put's outcome in ``CommitLog.append_each``: appended, refused by the encode, or None when
#: no mapped file could be created for it
AppendOutcome = AppendMessageResult | PutMessageStatus | None


class AppendingLog(Protocol):
    """What ``append_sends`` uses of the ``CommitLog`` it appends to."""

    config: StoreConfig
    mapped_file_queue: MappedFileQueue
    topic_queue_table: dict[str, int]
    store_timestamp: int
    msg_id_prefix: str

    def write_blank(self, mf: MappedFile) -> None: ...


def _append_runs(
    commit_log: AppendingLog, puts: list[SendPut], now: int
) -> tuple[array[int], list[bool] | None]:
    """append_sends's C calls, one a commitlog file: (status, phy, size, queue offset) a put
    and whether a mapped file could be created for it (None: for every put)."""
    compiled = native_record.RECORD
    assert compiled is not None, "SendPuts are appended by the C module"
    n = len(puts)
    slots = array("q", bytes(32 * n))  # (status, phy, size, queue offset) a put
    created: list[bool] | None = None  # made at the first put no mapped file takes
    max_record = commit_log.config.max_message_size + 65536
    start = 0
    while start < n:
        try:
            mf = commit_log.mapped_file_queue.get_last_mapped_file_or_create(0)
        except MappedFileCreateError:
            log.exception("create mapped file failed")
            if created is None:
                created = [True] * n
            created[start] = False
            start += 1
            continue
        wrote = mf.wrote_position
        start, pos = compiled.append_sends(
            mf.view, wrote, mf.file_size, mf.file_from_offset, puts, start,
            commit_log.topic_queue_table, now, max_record, slots,
        )  # fmt: skip
        if pos != wrote:
            mf.wrote_position = pos
            commit_log.store_timestamp = now
        if start < n:  # the next one does not fit: this file ends with a blank record
            commit_log.write_blank(mf)
    return slots, created


def append_send_values(commit_log: AppendingLog, puts: list[SendPut], now: int) -> list[int]:
    """A run of SendPuts, C writing each file's share in one call (the caller holds the put
    lock): four ints a put, (``SEND_STATUSES``' index, wrote offset, wrote bytes, queue
    offset), as plain ints."""
    slots, created = _append_runs(commit_log, puts, now)
    values = slots.tolist()  # one conversion, then plain ints
    if created is not None:  # no mapped file could be created for some
        for i, made in enumerate(created):
            if not made:
                values[4 * i] = NO_MAPPED_FILE
    return values


def with_refused(values: list[int], count: int, refused: set[int]) -> list[int]:
    """``values`` (four ints a put, for the puts appended) with the ``refused`` puts' figures
    (MESSAGE_ILLEGAL) in their places among ``count`` puts."""
    merged: list[int] = []
    k = 0
    for i in range(count):
        if i in refused:
            merged += (ILLEGAL, 0, 0, 0)
        else:
            merged += values[k : k + 4]
            k += 4
    return merged


def append_sends(commit_log: AppendingLog, puts: list[SendPut], now: int) -> list[AppendOutcome]:
    """``append_send_values`` as ``CommitLog.append_each``'s results (the caller holds the put
    lock)."""
    values = append_send_values(commit_log, puts, now)
    out: list[AppendOutcome] = []
    prefix = commit_log.msg_id_prefix
    ok = AppendMessageStatus.PUT_OK
    for k in range(0, len(values), 4):
        status = values[k]
        if status == NO_MAPPED_FILE:
            out.append(None)
        elif status:
            out.append(_SEND_STATUS[status])
        else:
            phy = values[k + 1]
            out.append(
                AppendMessageResult(
                    ok, phy, values[k + 2], f"{prefix}{phy:016X}", values[k + 3], now
                )
            )
    return out


def append_batch_sends(
    commit_log: AppendingLog, puts: list[SendPut], now: int
) -> AppendMessageResult | PutMessageStatus:
    """A batch send's SendPuts (``batch_puts``), the caller holding the put lock: one result
    for all, as ``CommitLog.append_batch`` gives (consecutive queue offsets, the msgIds
    joined by commas); the first refusal's status, or CREATE_MAPPED_FILE_FAILED, else."""
    slots, created = _append_runs(commit_log, puts, now)
    n = len(puts)
    if created is not None:
        return PutMessageStatus.CREATE_MAPPED_FILE_FAILED
    statuses = slots[0::4]
    if any(statuses):
        status = _SEND_STATUS[next(s for s in statuses if s)]
        assert status is not None
        return status
    prefix = commit_log.msg_id_prefix
    first = slots[1]
    last = 4 * (n - 1)
    compiled = native_record.RECORD
    msg_ids = compiled.batch_msg_ids(prefix, slots) if compiled is not None else None
    if msg_ids is None:  # the reference (and a prefix or offset C leaves to it)
        msg_ids = ",".join([f"{prefix}{phy:016X}" for phy in slots[1::4]])
    return AppendMessageResult(
        AppendMessageStatus.PUT_OK,
        wrote_offset=first,
        wrote_bytes=slots[last + 1] + slots[last + 2] - first,
        msg_id=msg_ids,
        queue_offset=slots[3],
        store_timestamp=now,
        msg_num=n,
    )
