"""topics.json and subscriptionGroup.json with RocketMQ 5's typed fields, byte for byte as
RocketMQ 5 writes them (fastjson's pretty form of TopicConfig and SubscriptionGroupConfig:
keys sorted, tabs), read from a file RocketMQ 5 wrote and written back unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.broker import BrokerConfig
from rocketq.broker.subscription_group import SubscriptionGroupManager
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.attribute import AttributeRefusedError, TopicMessageType, parse_to_map
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.remoting.protocol.retry_policy import (
    CustomizedRetryPolicy,
    ExponentialRetryPolicy,
    GroupRetryPolicy,
    GroupRetryPolicyType,
)

# one entry of RocketMQ 5's topics.json: TopicConfig with its attributes map
FIFO_TOPIC_ENTRY = """\t\t"Orders":{
\t\t\t"attributes":{
\t\t\t\t"message.type":"FIFO",
\t\t\t\t"reserve.time":"72"
\t\t\t},
\t\t\t"order":false,
\t\t\t"perm":6,
\t\t\t"readQueueNums":4,
\t\t\t"topicFilterType":"SINGLE_TAG",
\t\t\t"topicName":"Orders",
\t\t\t"topicSysFlag":0,
\t\t\t"writeQueueNums":4
\t\t}"""

TOPICS_JSON_5X = (
    '{\n\t"dataVersion":{\n\t\t"counter":7,\n\t\t"stateVersion":0,\n'
    '\t\t"timestamp":1700000123456\n\t},\n\t"topicConfigTable":{\n' + FIFO_TOPIC_ENTRY + "\n\t}\n}"
)

# one entry of RocketMQ 5's subscriptionGroup.json: SubscriptionGroupConfig of 5.x
FIFO_GROUP_ENTRY = """\t\t"FifoGroup":{
\t\t\t"attributes":{},
\t\t\t"brokerId":0,
\t\t\t"consumeBroadcastEnable":true,
\t\t\t"consumeEnable":true,
\t\t\t"consumeFromMinEnable":true,
\t\t\t"consumeMessageOrderly":true,
\t\t\t"consumeTimeoutMinute":15,
\t\t\t"groupName":"FifoGroup",
\t\t\t"groupRetryPolicy":{
\t\t\t\t"customizedRetryPolicy":{
\t\t\t\t\t"next":[1000,5000]
\t\t\t\t},
\t\t\t\t"type":"CUSTOMIZED"
\t\t\t},
\t\t\t"groupSysFlag":0,
\t\t\t"notifyConsumerIdsChangedEnable":true,
\t\t\t"retryMaxTimes":3,
\t\t\t"retryQueueNums":1,
\t\t\t"whichBrokerWhenConsumeSlowly":1
\t\t}"""

GROUPS_JSON_5X = (
    '{\n\t"dataVersion":{\n\t\t"counter":2,\n\t\t"stateVersion":0,\n'
    '\t\t"timestamp":1700000123456\n\t},\n\t"forbiddenTable":{},\n'
    '\t"subscriptionGroupTable":{\n' + FIFO_GROUP_ENTRY + "\n\t}\n}"
)


def topics(tmp_path: Path) -> TopicConfigManager:
    return TopicConfigManager(BrokerConfig(), tmp_path)


def test_a_typed_topic_is_written_to_topics_json_as_rocketmq_5_writes_it(tmp_path: Path) -> None:
    m = topics(tmp_path)
    tc = TopicConfig(topic_name="Orders", read_queue_nums=4, write_queue_nums=4)
    stored = m.update_topic_config_by_request(
        tc, parse_to_map("+message.type=FIFO,+reserve.time=72")
    )
    assert stored.topic_message_type is TopicMessageType.FIFO
    m.persist()  # the journal compacted into topics.json, as at shutdown
    assert FIFO_TOPIC_ENTRY in (tmp_path / "config" / "topics.json").read_text()


def test_topics_json_of_rocketmq_5_loads_with_its_attributes_and_writes_back(
    tmp_path: Path,
) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "topics.json").write_text(TOPICS_JSON_5X)
    m = topics(tmp_path)
    assert m.load()
    orders = m.topic_config_table["Orders"]
    assert orders.attributes == {"message.type": "FIFO", "reserve.time": "72"}
    m.update_topic_config_by_request(orders, parse_to_map("+message.type=DELAY"))
    m.persist()
    text = (tmp_path / "config" / "topics.json").read_text()
    assert FIFO_TOPIC_ENTRY.replace('"FIFO"', '"DELAY"') in text
    again = topics(tmp_path)
    assert again.load()
    assert again.topic_config_table["Orders"].topic_message_type is TopicMessageType.DELAY


def test_an_untyped_topic_keeps_rocketmq_4s_entry_and_an_update_keeps_the_attributes(
    tmp_path: Path,
) -> None:
    m = topics(tmp_path)
    plain = TopicConfig(topic_name="Plain", read_queue_nums=2, write_queue_nums=2)
    m.update_topic_config_by_request(plain, {})
    m.persist()
    assert '"attributes"' not in (tmp_path / "config" / "topics.json").read_text()
    m.update_topic_config_by_request(plain, parse_to_map("+message.type=TRANSACTION"))
    wider = TopicConfig(topic_name="Plain", read_queue_nums=8, write_queue_nums=8)
    kept = m.update_topic_config_by_request(wider, {})  # updateTopic without -a
    assert kept.attributes == {"message.type": "TRANSACTION"}
    assert kept.write_queue_nums == 8


def test_a_refused_change_leaves_the_topic_as_it_was(tmp_path: Path) -> None:
    m = topics(tmp_path)
    tc = TopicConfig(topic_name="T", read_queue_nums=2, write_queue_nums=2)
    m.update_topic_config_by_request(tc, parse_to_map("+queue.type=SimpleCQ"))
    before = m.data_version.counter
    with pytest.raises(AttributeRefusedError, match=r"unchangeable attribute\. key: queue\.type"):
        m.update_topic_config_by_request(tc, parse_to_map("+queue.type=SimpleCQ"))
    assert m.data_version.counter == before
    assert m.topic_config_table["T"].attributes == {"queue.type": "SimpleCQ"}


def test_the_compressed_registration_text_carries_attributes_only_when_set() -> None:
    typed = TopicConfig(topic_name="O", attributes={"message.type": "FIFO"})
    assert typed.encode_text() == 'O 16 16 6 SINGLE_TAG {"message.type":"FIFO"}'
    assert TopicConfig.decode_text(typed.encode_text()) == typed
    assert TopicConfig(topic_name="O").encode_text() == "O 16 16 6 SINGLE_TAG"


def test_a_fifo_group_is_written_to_subscription_group_json_as_rocketmq_5_writes_it(
    tmp_path: Path,
) -> None:
    m = SubscriptionGroupManager(tmp_path)
    cfg = SubscriptionGroupConfig(
        group_name="FifoGroup",
        retry_max_times=3,
        consume_message_orderly=True,
        group_retry_policy=GroupRetryPolicy(
            customized_retry_policy=CustomizedRetryPolicy(next=[1000, 5000])
        ),
        group_sys_flag=0,
        consume_timeout_minute=15,
        attributes={},
    )
    stored = m.update_subscription_group_config_by_request(cfg)
    assert stored.orderly
    assert stored.retry_policy.next_delay_duration_ms(0) == 5000  # next[min(0 + 2, 1)]
    assert FIFO_GROUP_ENTRY in (tmp_path / "config" / "subscriptionGroup.json").read_text()


def test_subscription_group_json_of_rocketmq_5_loads_and_writes_back(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "subscriptionGroup.json").write_text(GROUPS_JSON_5X)
    m = SubscriptionGroupManager(tmp_path)
    assert m.load()
    group = m.subscription_group_table["FifoGroup"]
    assert group.orderly
    assert group.retry_max_times == 3
    m.persist()
    assert FIFO_GROUP_ENTRY in (tmp_path / "config" / "subscriptionGroup.json").read_text()


def test_a_4x_group_keeps_its_shape_and_the_default_retry_policy(tmp_path: Path) -> None:
    m = SubscriptionGroupManager(tmp_path)
    stored = m.update_subscription_group_config_by_request(SubscriptionGroupConfig(group_name="G"))
    assert stored.attributes is None
    assert not stored.orderly
    assert "consumeMessageOrderly" not in stored.encode().decode()
    assert stored.retry_policy.next_delay_duration_ms(0) == 10_000  # 1s 5s [10s] ...


def test_an_exponential_policy_doubles_up_to_its_max() -> None:
    policy = GroupRetryPolicy(
        type=GroupRetryPolicyType.EXPONENTIAL,
        exponential_retry_policy=ExponentialRetryPolicy(initial=1000, max=5000, multiplier=2),
    )
    assert policy.encode() == (
        b'{"exponentialRetryPolicy":{"initial":1000,"max":5000,"multiplier":2},'
        b'"type":"EXPONENTIAL"}'
    )
    delays = [policy.retry_policy.next_delay_duration_ms(n) for n in range(5)]
    assert delays == [1000, 2000, 4000, 5000, 5000]
    # EXPONENTIAL without its policy falls back to the default CUSTOMIZED table
    bare = GroupRetryPolicy.decode(b'{"type":"EXPONENTIAL"}')
    assert bare.retry_policy.next_delay_duration_ms(0) == 10_000
