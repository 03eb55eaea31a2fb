"""What a send is and where it goes: its transaction kind (half, rollback or none), the timer
rerouting to rmq_sys_wheel_timer (the store's timer wheel brings it back) and its recall
handle, the delay level rerouting to SCHEDULE_TOPIC_XXXX with REAL_TOPIC/REAL_QID (the
ScheduleMessageService brings it back), and RocketMQ's maxDelayLevel.
"""

from __future__ import annotations

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.recall_message_handle import build_handle
from rocketq.common.topic import (
    DLQ_GROUP_TOPIC_PREFIX,
    RETRY_GROUP_TOPIC_PREFIX,
    SCHEDULE_QUEUE_NUMS,
    SCHEDULE_TOPIC,
)
from rocketq.store.message_store import MessageStore
from rocketq.store.results import PutMessageStatus
from rocketq.store.timer.timer_hook import check_if_timer_message


def apply_timer(msg: MessageExt, store: MessageStore) -> PutMessageStatus | None:
    """HookUtils.handleScheduleMessage's timer part: a message with TIMER_DELIVER_MS,
    TIMER_DELAY_SEC or TIMER_DELAY_MS (not a half) goes to the timer wheel's topic; the
    status says why it cannot (WHEEL_TIMER_NOT_ENABLE when timerWheelEnable=false)."""
    tran = MessageSysFlag.get_transaction_value(msg.sys_flag)
    if tran not in (MessageSysFlag.TRANSACTION_NOT_TYPE, MessageSysFlag.TRANSACTION_COMMIT_TYPE):
        return None
    if not check_if_timer_message(msg):
        return None
    timer = store.timer_message_store
    if timer is None:
        return PutMessageStatus.WHEEL_TIMER_NOT_ENABLE
    return timer.transform(msg)


def recall_handle_of(msg: MessageExt, broker_name: str) -> str | None:
    """SendMessageProcessor.attachRecallHandle: a timer message's handle (slot time + 1)."""
    timestamp = msg.properties.get(mc.PROPERTY_TIMER_OUT_MS)
    real_topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC)
    uniq = msg.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
    if timestamp is None or real_topic is None or real_topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return None
    return build_handle(real_topic, broker_name, str(int(timestamp) + 1), uniq or "")


def apply_delay(msg: MessageExt, max_level: int = SCHEDULE_QUEUE_NUMS) -> None:
    """A message with a delay level (not a half) goes to SCHEDULE_TOPIC_XXXX first.

    A level above ``max_level`` (how many levels messageDelayLevel configures, RocketMQ's
    maxDelayLevel) becomes the last level; past it no queue would ever be delivered.
    """
    level_text = msg.properties.get(mc.PROPERTY_DELAY_TIME_LEVEL)
    if not level_text or msg.topic.startswith(DLQ_GROUP_TOPIC_PREFIX):
        return
    tran = MessageSysFlag.get_transaction_value(msg.sys_flag)
    if tran not in (
        MessageSysFlag.TRANSACTION_NOT_TYPE,
        MessageSysFlag.TRANSACTION_COMMIT_TYPE,
    ):
        return
    try:
        level = min(int(level_text), max_level, SCHEDULE_QUEUE_NUMS)
    except ValueError:
        return
    if level <= 0:
        return
    msg.properties[mc.PROPERTY_DELAY_TIME_LEVEL] = str(level)
    msg.properties[mc.PROPERTY_REAL_TOPIC] = msg.topic
    msg.properties[mc.PROPERTY_REAL_QUEUE_ID] = str(msg.queue_id)
    msg.topic = SCHEDULE_TOPIC
    msg.queue_id = level - 1


def transaction_kind(props: dict[str, str], sys_flag: int) -> str:
    """Classify a send: half (TRAN_MSG=true or a PREPARED sysFlag), rollback, or none."""
    tran = MessageSysFlag.get_transaction_value(sys_flag)
    if (props.get(mc.PROPERTY_TRANSACTION_PREPARED) or "").lower() == "true":
        return "half"
    if tran == MessageSysFlag.TRANSACTION_PREPARED_TYPE:
        return "half"
    if tran == MessageSysFlag.TRANSACTION_ROLLBACK_TYPE:
        return "rollback"
    return "none"


def max_delay_level(store: MessageStore) -> int:
    """RocketMQ's maxDelayLevel: how many levels the store's messageDelayLevel configures
    (every send asks: the text is parsed once, not per send)."""
    text = store.config.message_delay_level
    count = _LEVEL_COUNTS.get(text)
    if count is None:
        count = _LEVEL_COUNTS[text] = len(store.config.delay_level_table_ms())
    return count


_LEVEL_COUNTS: dict[str, int] = {}  # by messageDelayLevel text
