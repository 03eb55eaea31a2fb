"""The topic vocabulary of rocketq.common.topic: system topics and the group prefixes."""

from __future__ import annotations

import pytest

from rocketq.common.topic import (
    NOT_ALLOWED_SEND_TOPICS,
    SYSTEM_TOPICS,
    dlq_topic,
    is_dlq_topic,
    is_retry_topic,
    is_system_topic,
    retry_topic,
)


@pytest.mark.parametrize(
    "topic",
    [
        "TBW102",
        "SCHEDULE_TOPIC_XXXX",
        "BenchmarkTest",
        "RMQ_SYS_TRANS_HALF_TOPIC",
        "RMQ_SYS_TRANS_OP_HALF_TOPIC",
        "TRANS_CHECK_MAX_TIME_TOPIC",
        "RMQ_SYS_TRACE_TOPIC",
        "OFFSET_MOVED_EVENT",
        "SELF_TEST_TOPIC",
        "rmq_sys_anything",
    ],
)
def test_rocketmqs_system_topics_and_the_rmq_sys_prefix_are_system_topics(topic: str) -> None:
    assert is_system_topic(topic)


@pytest.mark.parametrize("topic", ["Orders", "%RETRY%g", "%DLQ%g", "RMQ_SYS_MINE", "tbw102"])
def test_ordinary_and_group_topics_are_not_system_topics(topic: str) -> None:
    assert not is_system_topic(topic)


def test_every_topic_clients_may_not_send_to_is_a_system_topic() -> None:
    assert NOT_ALLOWED_SEND_TOPICS <= SYSTEM_TOPICS


def test_retry_and_dlq_topics_are_built_from_and_recognised_by_their_prefixes() -> None:
    assert retry_topic("g") == "%RETRY%g"
    assert is_retry_topic(retry_topic("g"))
    assert dlq_topic("g") == "%DLQ%g"
    assert is_dlq_topic(dlq_topic("g"))
    assert not is_retry_topic(dlq_topic("g"))
    assert not is_dlq_topic(retry_topic("g"))
