"""The POP keys of broker.conf in RocketMQ's spelling are honoured by name, with RocketMQ's
defaults, and out-of-range values are refused naming the key's field."""

from __future__ import annotations

import pytest

from rocketq.broker.config import BrokerConfig
from rocketq.errors import ConfigError

POP_KEYS = {
    "reviveQueueNum": ("revive_queue_num", "4", 4, 8),
    "reviveInterval": ("revive_interval_ms", "250", 250, 1000),
    "reviveAckWaitMs": ("revive_ack_wait_ms", "5000", 5000, 180_000),
    "popPollingSize": ("pop_polling_size", "16", 16, 1024),
    "popPollingMapSize": ("pop_polling_map_size", "64", 64, 100_000),
    "enableRetryTopicV2": ("enable_retry_topic_v2", "true", True, False),
    "popFromRetryProbability": ("pop_from_retry_probability", "50", 50, 20),
    "initPopOffsetByCheckMsgInMem": ("init_pop_offset_by_check_msg_in_mem", "false", False, True),
}


def test_pop_keys_load_from_broker_conf_with_rocketmqs_defaults() -> None:
    defaults = BrokerConfig()
    loaded = BrokerConfig.from_properties({k: text for k, (_, text, _, _) in POP_KEYS.items()})
    for key, (field, _text, value, default) in POP_KEYS.items():
        assert getattr(loaded, field) == value, key
        assert getattr(defaults, field) == default, key


@pytest.mark.parametrize(
    ("key", "text", "field"),
    [
        ("reviveQueueNum", "0", "revive_queue_num"),
        ("popPollingSize", "0", "pop_polling_size"),
        ("popFromRetryProbability", "101", "pop_from_retry_probability"),
        ("reviveInterval", "x", "reviveInterval"),
    ],
)
def test_bad_pop_values_are_refused_by_name(key: str, text: str, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        BrokerConfig.from_properties({key: text})
