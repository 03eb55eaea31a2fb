"""The send-side rewrite of a timer message (HookUtils.handleScheduleMessage's timer part).

A message with ``TIMER_DELAY_SEC``, ``TIMER_DELAY_MS`` or ``TIMER_DELIVER_MS`` (and no delay
level, not already a timer's) is due at ``deliverMs``. If that is in the future it is stored in
``rmq_sys_wheel_timer`` queue 0 with ``TIMER_OUT_MS`` (the slot: ``deliverMs`` floored to the
precision, one precision earlier when exact, so that the slot fires once ``now >= deliverMs``)
and ``REAL_TOPIC``/``REAL_QID``. A due time in the past leaves the message where it was sent
(delivered at once). A delay level wins: the timer properties are dropped.
"""

from __future__ import annotations

from collections.abc import Callable

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.store.results import PutMessageStatus

TIMER_TOPIC = "rmq_sys_wheel_timer"  # TimerMessageStore.TIMER_TOPIC
TIMER_PROPERTIES = (
    mc.PROPERTY_TIMER_DELIVER_MS,
    mc.PROPERTY_TIMER_DELAY_SEC,
    mc.PROPERTY_TIMER_DELAY_MS,
)


def check_if_timer_message(msg: MessageExt) -> bool:
    """HookUtils.checkIfTimerMessage (a delay level clears the timer properties)."""
    props = msg.properties
    level = props.get(mc.PROPERTY_DELAY_TIME_LEVEL)
    if level and level.strip().lstrip("-").isdigit() and int(level) > 0:
        for name in TIMER_PROPERTIES:
            props.pop(name, None)
        return False
    if msg.topic == TIMER_TOPIC or mc.PROPERTY_TIMER_OUT_MS in props:
        return False
    return any(name in props for name in TIMER_PROPERTIES)


def deliver_ms_of(props: dict[str, str], now_ms: int) -> int:
    """The due time the properties ask for; ValueError when malformed (Long.parseLong)."""
    if mc.PROPERTY_TIMER_DELAY_SEC in props:
        return now_ms + _parse_long(props[mc.PROPERTY_TIMER_DELAY_SEC]) * 1000
    if mc.PROPERTY_TIMER_DELAY_MS in props:
        return now_ms + _parse_long(props[mc.PROPERTY_TIMER_DELAY_MS])
    return _parse_long(props[mc.PROPERTY_TIMER_DELIVER_MS])


def _parse_long(text: str) -> int:
    if not text or not (text.isdigit() or (text[0] in "+-" and text[1:].isdigit())):
        raise ValueError(f"not a long: {text!r}")
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"out of range: {text!r}")
    return value


def transform_timer_message(
    msg: MessageExt,
    *,
    now_ms: int,
    precision_ms: int,
    max_delay_sec: int,
    is_reject: Callable[[int], bool] = lambda _slot_ms: False,
) -> PutMessageStatus | None:
    """HookUtils.transformTimerMessage: reroute ``msg`` in place; a status when refused."""
    props = msg.properties
    try:
        deliver_ms = deliver_ms_of(props, now_ms)
    except ValueError:
        return PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL
    if deliver_ms > now_ms:
        if deliver_ms - now_ms > max_delay_sec * 1000:
            return PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL
        if deliver_ms % precision_ms == 0:
            deliver_ms -= precision_ms
        else:
            deliver_ms = deliver_ms // precision_ms * precision_ms
        if is_reject(deliver_ms):
            return PutMessageStatus.WHEEL_TIMER_FLOW_CONTROL
        props[mc.PROPERTY_TIMER_OUT_MS] = str(deliver_ms)
        props[mc.PROPERTY_REAL_TOPIC] = msg.topic
        props[mc.PROPERTY_REAL_QUEUE_ID] = str(msg.queue_id)
        msg.topic = TIMER_TOPIC
        msg.queue_id = 0
    elif mc.PROPERTY_TIMER_DEL_UNIQKEY in props:
        return PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL
    return None


def build_delete_key(real_topic: str, uniq_key: str) -> str:
    """TimerMessageStore.buildDeleteKey: how a recall names the message it deletes."""
    return f"{real_topic}+{uniq_key}"
