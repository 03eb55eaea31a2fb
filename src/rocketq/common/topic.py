"""Topic names: the system topics and their validation (RocketMQ's TopicValidator), and the
retry and dead-letter prefixes of consumer groups (MixAll).

``validate_topic`` is the one check; the client raises its reason, the broker answers it,
the store refuses the put. System topics built from a group name (``%RETRY%<group>``,
``%DLQ%<group>``) may be up to 255 characters, others 127.
"""

from __future__ import annotations

import re

AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102"
SELF_TEST_TOPIC = "SELF_TEST_TOPIC"
BENCHMARK_TOPIC = "BenchmarkTest"
OFFSET_MOVED_EVENT = "OFFSET_MOVED_EVENT"
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
RMQ_SYS_TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
SYSTEM_TOPIC_PREFIX = "rmq_sys_"
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
#: SCHEDULE_TOPIC_XXXX has one queue per delay level.
SCHEDULE_QUEUE_NUMS = 18

#: Topics clients may not send to (TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET).
NOT_ALLOWED_SEND_TOPICS = frozenset(
    {
        SCHEDULE_TOPIC,
        TRANS_HALF_TOPIC,
        TRANS_OP_HALF_TOPIC,
        TRANS_CHECK_MAX_TIME_TOPIC,
        SELF_TEST_TOPIC,
        OFFSET_MOVED_EVENT,
    }
)

#: TopicValidator.SYSTEM_TOPIC_SET; a broker also keeps its cluster and broker names and its
#: own trace topic as system topics (TopicConfigManager).
SYSTEM_TOPICS = frozenset(
    {
        AUTO_CREATE_TOPIC_KEY_TOPIC,
        SCHEDULE_TOPIC,
        BENCHMARK_TOPIC,
        TRANS_HALF_TOPIC,
        TRANS_OP_HALF_TOPIC,
        TRANS_CHECK_MAX_TIME_TOPIC,
        RMQ_SYS_TRACE_TOPIC,
        OFFSET_MOVED_EVENT,
        SELF_TEST_TOPIC,
    }
)

VALID_TOPIC_CHARACTERS = "^[%|a-zA-Z0-9_-]+$"
TOPIC_NAME_PATTERN = re.compile(VALID_TOPIC_CHARACTERS)
TOPIC_MAX_LENGTH = 127
GROUP_TOPIC_MAX_LENGTH = 255
_GROUP_TOPIC_PREFIXES = (RETRY_GROUP_TOPIC_PREFIX, DLQ_GROUP_TOPIC_PREFIX)


def topic_max_length(topic: str) -> int:
    """255 for ``%RETRY%``/``%DLQ%`` topics (a group name follows the prefix), else 127."""
    return GROUP_TOPIC_MAX_LENGTH if topic.startswith(_GROUP_TOPIC_PREFIXES) else TOPIC_MAX_LENGTH


def validate_topic(topic: str, max_length: int = TOPIC_MAX_LENGTH) -> str | None:
    """None when ``topic`` is a valid name, else the reason (TopicValidator.validateTopic)."""
    if not topic or not topic.strip():
        return "the specified topic is blank"
    if len(topic) > max_length:
        return f"the specified topic [{topic}] is longer than {max_length} characters"
    if not TOPIC_NAME_PATTERN.match(topic):
        return (
            f"the specified topic [{topic}] contains illegal characters, "
            f"allowing only {VALID_TOPIC_CHARACTERS}"
        )
    return None


def is_system_topic(topic: str) -> bool:
    """TopicValidator.isSystemTopic: one of ``SYSTEM_TOPICS`` or ``rmq_sys_``-prefixed."""
    return topic in SYSTEM_TOPICS or topic.startswith(SYSTEM_TOPIC_PREFIX)


def is_retry_topic(topic: str) -> bool:
    return topic.startswith(RETRY_GROUP_TOPIC_PREFIX)


def is_dlq_topic(topic: str) -> bool:
    return topic.startswith(DLQ_GROUP_TOPIC_PREFIX)


def retry_topic(group: str) -> str:
    return RETRY_GROUP_TOPIC_PREFIX + group


def dlq_topic(group: str) -> str:
    return DLQ_GROUP_TOPIC_PREFIX + group
