from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.broker.subscription_group import SubscriptionGroupManager
from rocketq.remoting.protocol import fastjson

CONSUMER_OFFSET_JSON_5X = """{
\t"dataVersion":{
\t\t"counter":42,
\t\t"stateVersion":0,
\t\t"timestamp":1700000123456
\t},
\t"groupTopicMap":{
\t\t"demo_group":["TopicTest","%RETRY%demo_group"]
\t},
\t"offsetTable":{
\t\t"TopicTest@demo_group":{0:250,1:249,2:251,3:250
\t\t},
\t\t"%RETRY%demo_group@demo_group":{0:0
\t\t}
\t}
}"""


def test_offset_json_with_bare_keys_loads(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "consumerOffset.json").write_text(CONSUMER_OFFSET_JSON_5X)
    m = ConsumerOffsetManager(tmp_path)
    assert m.load()
    assert m.query_offset("demo_group", "TopicTest", 2) == 251
    assert m.query_offset("demo_group", "%RETRY%demo_group", 0) == 0
    assert m.query_offset("demo_group", "TopicTest", 9) == -1
    assert m.which_topic_by_consumer("demo_group") == {"TopicTest", "%RETRY%demo_group"}
    assert m.which_group_by_topic("TopicTest") == {"demo_group"}


def test_committed_offsets_survive_persist_and_reload(tmp_path: Path) -> None:
    m = ConsumerOffsetManager(tmp_path)
    m.commit_offset("127.0.0.1:1", "g", "T", 1, 10)
    m.commit_offset("127.0.0.1:1", "g", "T", 0, 5)
    m.persist()
    text = (tmp_path / "config" / "consumerOffset.json").read_text()
    assert text == '{\n\t"offsetTable":{\n\t\t"T@g":{0:5,1:10\n\t\t}\n\t}\n}'
    again = ConsumerOffsetManager(tmp_path)
    assert again.load()
    assert again.query_offsets("g", "T") == {0: 5, 1: 10}


def test_remove_offset_and_clean_by_topic(tmp_path: Path) -> None:
    m = ConsumerOffsetManager(tmp_path)
    m.commit_offset("", "g1", "A", 0, 1)
    m.commit_offset("", "g2", "A", 0, 2)
    m.commit_offset("", "g1", "B", 0, 3)
    m.remove_offset("g1")
    assert m.query_offset("g1", "B", 0) == -1
    assert m.query_offset("g2", "A", 0) == 2
    m.clean_offset_by_topic("A")
    assert m.offset_table == {}


def test_subscription_groups_auto_create_and_persist(tmp_path: Path) -> None:
    m = SubscriptionGroupManager(tmp_path)
    assert "TOOLS_CONSUMER" in m.subscription_group_table
    cfg = m.find_subscription_group_config("g")
    assert cfg is not None
    assert cfg.retry_max_times == 16
    assert cfg.retry_queue_nums == 1
    again = SubscriptionGroupManager(tmp_path)
    assert again.load()
    assert again.subscription_group_table["g"] == cfg
    text = (tmp_path / "config" / "subscriptionGroup.json").read_text()
    assert '\t\t"g":{\n\t\t\t"brokerId":0,\n\t\t\t"consumeBroadcastEnable":true,' in text


def test_subscription_group_is_not_created_when_auto_create_is_off(tmp_path: Path) -> None:
    m = SubscriptionGroupManager(tmp_path, auto_create=False)
    assert m.find_subscription_group_config("g") is None
    assert not (tmp_path / "config" / "subscriptionGroup.json").exists()


@given(
    st.dictionaries(
        st.tuples(st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8)).filter(
            lambda tg: "@" not in tg[0] + tg[1]
        ),
        st.dictionaries(st.integers(0, 64), st.integers(-1, 1 << 40), max_size=5),
        max_size=6,
    )
)
def test_the_offsets_text_is_the_pretty_printers(
    table: dict[tuple[str, str], dict[int, int]],
) -> None:
    m = ConsumerOffsetManager("unused")
    for (topic, group), queues in table.items():
        m.offset_table[m.key(topic, group)] = dict(queues)  # empty maps too
    assert m.encode_text() == fastjson.dumps_pretty(m.encode())


def test_a_persist_with_nothing_moved_writes_nothing(tmp_path: Path) -> None:
    m = ConsumerOffsetManager(tmp_path)
    m.commit_offset("h", "G", "T", 0, 5)
    m.persist()
    path = tmp_path / "config" / "consumerOffset.json"
    written = path.stat().st_ino  # each write replaces the file
    m.persist()
    assert path.stat().st_ino == written
    m.commit_offset("h", "G", "T", 0, 6)
    m.persist()
    assert path.stat().st_ino != written
    again = ConsumerOffsetManager(tmp_path)
    assert again.load()
    assert again.query_offset("G", "T", 0) == 6
