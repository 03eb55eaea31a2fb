"""The arrivals of a direct dispatch run (reput_run.c's ``dispatch_direct`` with a list).

While a pull is held or a POP parked, the direct run also returns, per record it dispatched,
what the arrival listener is told of it: ``DirectArrival`` (topic, queue id, queue offset,
tags code, store timestamp, commitlog offset, size). The listener gets the same arguments as
from the Python round, in the same order, except the properties: a :class:`RecordProperties`
that decodes them from the record only when a waiter's filter reads them (an SQL92
subscription); a TAG filter or none never does, so the common wake-up builds no dict.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping

from rocketq.common.message_decoder import decode_record_properties

log = logging.getLogger(__name__)

#: (topic, queue_id, queue_offset, tags_code, store_timestamp, commitlog_offset, size)
DirectArrival = tuple[str, int, int, int, int, int, int]
#: CommitLog.get_message: a record's bytes (None when they are gone)
RecordReader = Callable[[int, int], "bytes | None"]
ArrivingListener = Callable[[str, int, int, int, int, Mapping[str, str]], None]


class RecordProperties(Mapping[str, str]):
    """A dispatched record's properties, decoded from the commitlog on first use (as
    ``decode_properties`` decodes them for the Python round's DispatchRequest)."""

    __slots__ = ("_offset", "_props", "_read", "_size")

    def __init__(self, read: RecordReader, offset: int, size: int) -> None:
        self._read = read
        self._offset = offset
        self._size = size
        self._props: dict[str, str] | None = None

    def _decoded(self) -> dict[str, str]:
        props = self._props
        if props is None:
            try:
                data = self._read(self._offset, self._size)
            except ValueError:  # its file was closed since (the store shut down)
                data = None
            # the record was dispatched from these bytes a moment ago; gone only if its file
            # was deleted or closed since (then no property is known)
            props = decode_record_properties(data) if data is not None else {}
            self._props = props
        return props

    def __getitem__(self, key: str) -> str:
        return self._decoded()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    def __repr__(self) -> str:
        return f"RecordProperties({self._decoded()!r})"


def notify_arrivals(
    listener: ArrivingListener, read: RecordReader, arrivals: list[DirectArrival]
) -> None:
    """Tell ``listener`` of each arrival, in order; a listener's error is logged and the
    others are still told (as ``ReputMessageService._notify``)."""
    for topic, queue_id, queue_offset, tags_code, store_ts, offset, size in arrivals:
        try:
            listener(
                topic,
                queue_id,
                queue_offset,
                tags_code,
                store_ts,
                RecordProperties(read, offset, size),
            )
        except Exception:  # a listener's error must not stop the dispatch; logged
            log.exception("message arriving listener failed")
