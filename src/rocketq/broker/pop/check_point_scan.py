"""Reading the check points (``ck`` records) a broker's store holds outside the revive service's
own reads: in the wheel topic ``rmq_sys_wheel_timer`` (a ck goes through the timer, due at its
revive time - 1 s, PopMessageProcessor.appendCheckPoint) and in the revive topic's queues.

The wheel topic's queue is a log of every timer message put, with the real topic and tags in
its properties: a ck stays there after the timer delivered it, for as long as its commitlog
file does. Its queue offsets follow the store time, so a time bounds a scan
(``get_offset_in_queue_by_time``). Used by a new master's pop offsets
(``controller_mode/pop_offsets.py``) and by the revive service's superseding check points
(``supersede.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from rocketq.broker.pop.records import (
    ACK_TAG,
    BATCH_ACK_TAG,
    CANCEL_PROPERTY,
    CK_TAG,
    AckMsg,
    PopCheckPoint,
    loads_record,
)
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.errors import RocketQError
from rocketq.store.message_store import MessageStore

log = logging.getLogger(__name__)

#: the clocks of an old and a new master may differ by this much
CLOCK_MARGIN_MS = 2_000
READ_BATCH = 64
SCAN_GROUP = "CID_RMQ_SYS_POP_OFFSETS"


def end_of(ck: PopCheckPoint) -> int:
    """The queue offset after the last message the ck popped."""
    diffs = ck.queue_offset_diff
    return ck.start_offset + (max(diffs) + 1 if diffs else ck.num)


def check_point_of(msg: MessageExt, revive: str) -> PopCheckPoint | None:
    """The ck ``msg`` carries for the revive topic ``revive`` (None: another record)."""
    props = msg.properties
    if props.get(mc.PROPERTY_TAGS) != CK_TAG:
        return None
    if props.get(mc.PROPERTY_REAL_TOPIC, msg.topic) != revive:
        return None
    try:
        record = loads_record(CK_TAG, bytes(msg.body))
    except (RocketQError, ValueError, KeyError, TypeError):
        log.warning("an unreadable ck record at commitlog offset %d", msg.commitlog_offset)
        return None
    return record if isinstance(record, PopCheckPoint) else None


def cancelled_key_of(msg: MessageExt, revive: str, default_broker: str) -> str | None:
    """The merge key of the check point ``msg`` cancels (an ack marked ``CANCEL_PROPERTY``:
    its pop was never answered, pop_service.py), None for any other record."""
    props = msg.properties
    tag = props.get(mc.PROPERTY_TAGS)
    if tag not in (ACK_TAG, BATCH_ACK_TAG) or props.get(CANCEL_PROPERTY) != "true":
        return None
    if props.get(mc.PROPERTY_REAL_TOPIC, msg.topic) != revive:
        return None
    try:
        record = loads_record(tag, bytes(msg.body))
    except (RocketQError, ValueError, KeyError, TypeError):
        log.warning("an unreadable ack record at commitlog offset %d", msg.commitlog_offset)
        return None
    return record.merge_key(default_broker) if isinstance(record, AckMsg) else None


def messages_since(
    store: MessageStore, topic: str, queue_id: int, since_ms: int, since_phy: int | None = None
) -> Iterator[MessageExt]:
    """The queue's messages stored since ``since_ms``, or at or past commitlog offset
    ``since_phy`` (whichever reaches further back), to its end."""
    if store.find_consume_queue(topic, queue_id, create=False) is None:
        return
    offset = store.get_offset_in_queue_by_time(topic, queue_id, since_ms)
    if since_phy is not None:
        offset = min(offset, store.get_offset_in_queue_by_phy(topic, queue_id, since_phy))
    yield from messages_between(store, topic, queue_id, offset, None)


def messages_between(
    store: MessageStore, topic: str, queue_id: int, offset: int, end: int | None
) -> Iterator[MessageExt]:
    """The queue's messages from ``offset`` up to ``end`` (excluded; None: to its end)."""
    while end is None or offset < end:
        want = READ_BATCH if end is None else min(READ_BATCH, end - offset)
        result = store.get_message(SCAN_GROUP, topic, queue_id, offset, want)
        if not result.message_buffers:
            return
        for data, queue_offset in zip(
            result.message_buffers, result.message_queue_offsets, strict=True
        ):
            if end is not None and queue_offset >= end:
                return
            yield decode_message(data, check_crc=False)
        if result.next_begin_offset <= offset:
            return
        offset = result.next_begin_offset
