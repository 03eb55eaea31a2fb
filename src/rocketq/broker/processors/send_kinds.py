"""What a send is and where it goes: its transaction kind (half, rollback or none), the delay
level rerouting to SCHEDULE_TOPIC_XXXX with REAL_TOPIC/REAL_QID (the ScheduleMessageService
brings it back), and RocketMQ's maxDelayLevel.
"""

from __future__ import annotations

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.topic import DLQ_GROUP_TOPIC_PREFIX, SCHEDULE_QUEUE_NUMS, SCHEDULE_TOPIC
from rocketq.store.message_store import MessageStore


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
