from __future__ import annotations

from pathlib import Path

from rocketq.broker import BrokerConfig
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.topic import validate_topic
from rocketq.common.topic_config import PERM_INHERIT, TopicConfig
from rocketq.remoting.protocol import fastjson

TOPICS_JSON_4X = """{
\t"dataVersion":{
\t\t"counter":3,
\t\t"timestamp":1700000123456
\t},
\t"topicConfigTable":{
\t\t"TopicTest":{
\t\t\t"order":false,
\t\t\t"perm":6,
\t\t\t"readQueueNums":4,
\t\t\t"topicFilterType":"SINGLE_TAG",
\t\t\t"topicName":"TopicTest",
\t\t\t"topicSysFlag":0,
\t\t\t"writeQueueNums":4
\t\t}
\t}
}"""


def test_system_topics_exist_at_init(tmp_path: Path) -> None:
    m = TopicConfigManager(BrokerConfig(broker_name="b1"), tmp_path)
    table = m.topic_config_table
    assert table["TBW102"].perm == 7
    assert table["TBW102"].write_queue_nums == 8
    assert table["SCHEDULE_TOPIC_XXXX"].read_queue_nums == 18
    assert table["DefaultCluster"].read_queue_nums == 16
    assert table["DefaultCluster"].perm == 7
    assert table["b1"].perm == 7
    assert table["BenchmarkTest"].write_queue_nums == 1024
    assert {"SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT", "DefaultCluster_REPLY_TOPIC"} <= set(table)
    assert m.is_system_topic("SCHEDULE_TOPIC_XXXX")
    assert m.is_system_topic("rmq_sys_x")
    assert not m.is_system_topic("TopicTest")


def test_tbw102_is_absent_when_auto_create_is_off(tmp_path: Path) -> None:
    m = TopicConfigManager(BrokerConfig(auto_create_topic_enable=False), tmp_path)
    assert "TBW102" not in m.topic_config_table
    assert m.create_topic_in_send_message_method("T", "TBW102", 4) is None


def test_auto_create_from_tbw102_takes_min_queue_nums_and_drops_inherit(tmp_path: Path) -> None:
    m = TopicConfigManager(BrokerConfig(), tmp_path)
    tc = m.create_topic_in_send_message_method("NewTopic", "TBW102", 4)
    assert tc is not None
    assert (tc.read_queue_nums, tc.write_queue_nums) == (4, 4)
    assert tc.perm == 6
    assert not tc.perm & PERM_INHERIT
    big = m.create_topic_in_send_message_method("Big", "TBW102", 64)
    assert big is not None
    assert big.write_queue_nums == 8
    assert m.data_version.counter == 2


def test_topics_json_reads_a_4x_file_and_round_trips(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "topics.json").write_text(TOPICS_JSON_4X)
    m = TopicConfigManager(BrokerConfig(), tmp_path)
    assert m.load()
    assert m.topic_config_table["TopicTest"] == TopicConfig(
        topic_name="TopicTest", read_queue_nums=4, write_queue_nums=4
    )
    assert "TBW102" in m.topic_config_table
    assert m.data_version.counter == 3
    m.update_topic_config(TopicConfig(topic_name="Other", read_queue_nums=2, write_queue_nums=2))
    m.persist()  # the journal compacted into topics.json, as at shutdown
    written = fastjson.loads((tmp_path / "config" / "topics.json").read_text())
    assert written["dataVersion"]["counter"] == 4
    assert written["topicConfigTable"]["Other"]["readQueueNums"] == 2
    assert (
        '\t\t"TopicTest":{\n\t\t\t"order":false,\n\t\t\t"perm":6,'
        in (tmp_path / "config" / "topics.json").read_text()
    )
    again = TopicConfigManager(BrokerConfig(), tmp_path)
    assert again.load()
    assert again.topic_config_table["Other"].write_queue_nums == 2


def test_delete_topic_removes_it_and_persists(tmp_path: Path) -> None:
    m = TopicConfigManager(BrokerConfig(), tmp_path)
    m.update_topic_config(TopicConfig(topic_name="Gone"))
    assert m.delete_topic_config("Gone")
    assert not m.delete_topic_config("Gone")
    again = TopicConfigManager(BrokerConfig(), tmp_path)
    again.load()
    assert "Gone" not in again.topic_config_table


def test_validate_topic_rejects_bad_names() -> None:
    assert validate_topic("Topic_Test-1|%RETRY%") is None
    assert validate_topic("") is not None
    assert "illegal" in (validate_topic("a b") or "")
    assert validate_topic("x" * 128) is not None
