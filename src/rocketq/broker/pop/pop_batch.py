"""What one pop found (``PopBatch``) and the pop's read of records in memory (the pull's C
walk), for ``PopReader``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rocketq.broker.filter import ExpressionMessageFilter
from rocketq.broker.pop.pop_codec import PopEntry
from rocketq.store.results import GetMessageResult

if TYPE_CHECKING:
    from rocketq.store.message_store import MessageStore


@dataclass(slots=True)
class PopBatch:
    """What one pop found: the records (retry ones re-encoded) and the response infos."""

    pop_time: int
    invisible_time: int
    revive_qid: int
    buffers: list[bytes] = field(default_factory=list)  # records, or runs of records
    entries: list[PopEntry] = field(default_factory=list)  # each queue read: the offsets infos
    rest_num: int = 0
    order: bool = False
    attempt_id: str | None = None
    order_count_info: list[str] = field(default_factory=list)
    count: int = 0  # messages in ``buffers``

    def add_records(self, result: GetMessageResult) -> None:
        """The records a read found: its body in one piece when read in C."""
        if result.body is not None:
            self.buffers.append(result.body)
        else:
            self.buffers.extend(result.message_buffers)
        self.count += result.message_count


def read_in_memory(
    store: MessageStore,
    topic: str,
    qid: int,
    offset: int,
    want: int,
    message_filter: ExpressionMessageFilter,
) -> GetMessageResult | None:
    """The pull's read (``MessageStore.get_message_body``: the units walked and the records
    copied in one C call, on the loop, when every record is in the page cache) for a TAG
    filter or none. Only a read that took every unit it walked is used: its queue offsets
    are then ``offset`` up to its next offset, which the checkpoint and the reply need;
    anything else (C off, a record not in memory, units filtered out or gone, nothing
    found) returns None, and ``get_message``, the reference, reads it."""
    if type(message_filter) is not ExpressionMessageFilter:  # SQL92 reads the properties
        return None
    codes = None
    if not message_filter.matches_all:
        assert message_filter.subscription is not None
        codes = tuple(message_filter.subscription.code_set)
    found = store.get_message_body(topic, qid, offset, want, codes)
    if found is None or not found.body_count:
        return None
    if found.next_begin_offset - offset != found.body_count:
        return None
    return found
