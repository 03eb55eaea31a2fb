"""TimerDequeuePut: the puts of due timers (TimerMessageStore's TimerDequeuePutMessageService,
convert and doPut).

Each due timer becomes a copy for its real topic (a roll: for the wheel topic again) with
``TIMER_ENQUEUE_MS``/``TIMER_DEQUEUE_MS``; a delete marker is never put. The copies of one
round are put together (``MessageStore.async_put_each``: one commitlog lock hold, one reput
wake-up) instead of one put each; a copy the store refuses for a passing reason is put again
alone until it is stored or the timer stops. Beyond RocketMQ, a restarted timer skips the
copies it already put before the restart (``delivery_marks``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.errors import DecodeError
from rocketq.store.message_writer import PutRequest
from rocketq.store.results import PutMessageResult, PutMessageStatus
from rocketq.store.timer.delivery_marks import MarkKey, mark_key
from rocketq.store.timer.timer_context import TimerContext
from rocketq.store.timer.timer_hook import deliver_ms_of
from rocketq.store.timer.timer_log import MAGIC_DELETE, MAGIC_ROLL

log = logging.getLogger(__name__)

LONG_MAX = 2**63 - 1
PUT_RETRYABLE = frozenset(
    {
        PutMessageStatus.SERVICE_NOT_AVAILABLE,
        PutMessageStatus.FLUSH_DISK_TIMEOUT,
        PutMessageStatus.FLUSH_SLAVE_TIMEOUT,
        PutMessageStatus.OS_PAGE_CACHE_BUSY,
        PutMessageStatus.CREATE_MAPPED_FILE_FAILED,
        PutMessageStatus.SLAVE_NOT_AVAILABLE,
        PutMessageStatus.UNKNOWN_ERROR,
    }
)


def need_roll(magic: int) -> bool:
    return bool(magic & MAGIC_ROLL)


def need_delete(magic: int) -> bool:
    return bool(magic & MAGIC_DELETE)


class TimerDequeuePut:
    def __init__(self, timer: TimerContext) -> None:
        self.timer = timer

    def read_message(self, offset_py: int, size_py: int) -> MessageExt | None:
        data = self.timer.message_store.select_one_message_by_offset(offset_py, size_py)
        if data is None:
            return None
        try:
            return decode_message(data, check_crc=False)
        except DecodeError:
            log.warning("timer: no message at commitlog offset %d size %d", offset_py, size_py)
            return None

    def due_ms(self, msg: MessageExt, slot_ms: int) -> int:
        """When ``msg`` (in the slot at ``slot_ms``) may be put: its own ``deliverMs``, kept
        inside the slot's (slot, slot + precision]. A delay is counted from the wheel-topic
        message's store time, never before the send-side hook's clock, so never early."""
        precision = self.timer.precision_ms
        try:
            due = deliver_ms_of(msg.properties, msg.store_timestamp)
        except (ValueError, KeyError):
            due = slot_ms + precision
        return min(max(due, slot_ms), slot_ms + precision)

    def hold_until(self, due_ms: int) -> bool:
        """Wait until the clock reaches ``due_ms``; False when the timer is stopping."""
        store, stopping = self.timer.message_store, self.timer.shutting_down
        while True:
            left = due_ms - store.now_ms()
            if left <= 0:
                return True
            if stopping.wait(left / 1000):
                return False

    def convert(self, msg: MessageExt, enqueue_time: int, roll: bool) -> MessageExt:
        """TimerMessageStore.convert + convertMessage: the copy to put."""
        props = dict(msg.properties)
        if enqueue_time != -1:
            props[mc.PROPERTY_TIMER_ENQUEUE_MS] = str(enqueue_time)
        if roll:
            props[mc.PROPERTY_TIMER_ROLL_TIMES] = str(
                int(props.get(mc.PROPERTY_TIMER_ROLL_TIMES, "0") or 0) + 1
            )
        props[mc.PROPERTY_TIMER_DEQUEUE_MS] = str(self.timer.message_store.now_ms())
        if roll:
            topic, queue_id = msg.topic, msg.queue_id
        else:
            topic = props.pop(mc.PROPERTY_REAL_TOPIC, "")
            queue_id = int(props.pop(mc.PROPERTY_REAL_QUEUE_ID, "0") or 0)
        props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, None)
        return MessageExt(
            topic=topic,
            queue_id=queue_id,
            body=msg.body,
            flag=msg.flag,
            properties=props,
            sys_flag=msg.sys_flag,
            born_timestamp=msg.born_timestamp,
            born_host=msg.born_host,
            store_host=msg.store_host,
            reconsume_times=msg.reconsume_times,
        )

    def deliver(self, due: Sequence[tuple[MessageExt, int, int]]) -> bool:
        """Put each ``(msg, enqueue time, magic)`` to its real topic (a roll: back into the
        wheel topic), all in one append. False only when the timer is stopping before every
        put was done."""
        timer = self.timer
        marks = timer.marks
        puts: list[PutRequest] = []
        keys: list[MarkKey | None] = []
        for msg, enqueue_time, magic in due:
            roll = need_roll(magic)
            if not roll and mc.PROPERTY_TIMER_DEL_UNIQKEY in msg.properties:
                continue  # a delete marker is never delivered (doPut's PUT_NO_RETRY)
            timer.add_metric(msg, -1)
            inner = self.convert(msg, enqueue_time, roll)
            timer.timer_metrics.count_dequeue(msg.properties.get(mc.PROPERTY_REAL_TOPIC, ""))
            key = mark_key(inner, roll=roll)
            if (
                marks is not None
                and key is not None
                and marks.seen(inner.topic, inner.queue_id, key, roll=roll)
            ):
                continue
            puts.append(PutRequest(inner, wait_store_msg_ok=False))
            keys.append(key)
        if not puts:
            return True
        results = timer.message_store.async_put_each(puts).results
        done = True
        for put, key, result in zip(puts, keys, results, strict=True):
            if not self._stored(put.msg, result):
                done = False  # stopping: the slot is read again after the restart
            elif marks is not None and key is not None:
                marks.add(put.msg.topic, put.msg.queue_id, key)
        return done

    def _stored(self, inner: MessageExt, first: PutMessageResult) -> bool:
        """The put is done (stored, or dropped for good); False: stopping before it was."""
        result = first
        retries = 0
        while True:
            if result.status is PutMessageStatus.PUT_OK or result.is_ok:
                return True
            if result.status not in PUT_RETRYABLE:
                log.warning("timer: dropping a message for %s: %s", inner.topic, result.status)
                return True
            if self.timer.shutting_down.is_set():
                return False
            retries += 1
            if not self.timer.config.timer_enable_retry_until_success and retries >= 3:
                log.error("timer: a message for %s failed %d times", inner.topic, retries)
                return True
            time.sleep(0.5 * self.timer.precision_ms / 1000)
            store = self.timer.message_store
            result = store.async_put_message(inner, wait_store_msg_ok=False).result()
