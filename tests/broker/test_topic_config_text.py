"""topics.json joined from per-topic parts is the text the whole wrapper pretty-prints to,
whatever changed between compactions (puts, changes made without a put, deletes), and a
manager's compaction writes it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from rocketq.broker import BrokerConfig
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.broker.topic_config_text import TopicsJsonText
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.fastjson import dumps_pretty
from rocketq.remoting.protocol.json_body import to_json
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper


def whole(table: dict[str, TopicConfig], version: DataVersion) -> str:
    wrapper = TopicConfigSerializeWrapper(topic_config_table=dict(table), data_version=version)
    return dumps_pretty(wrapper.to_json())


def tc(name: str, queues: int = 8, **more: Any) -> TopicConfig:
    return TopicConfig(topic_name=name, read_queue_nums=queues, write_queue_nums=queues, **more)


def test_parts_join_to_the_whole_text_across_changes() -> None:
    text = TopicsJsonText()
    version = DataVersion(timestamp=1700000000000, counter=7)
    table: dict[str, TopicConfig] = {}
    assert text.render(table, version) == whole(table, version)
    for i in (5, 3, 9, 1, 7):  # not in name order
        table[f"T{i}"] = tc(f"T{i}", i, attributes={"+message.type": "NORMAL"} if i == 3 else None)
        text.put(table[f"T{i}"], to_json(table[f"T{i}"]))
    table["Ünïcode-%"] = tc("Ünïcode-%", order=True)  # stored without a put: encoded at render
    assert text.render(table, version) == whole(table, version)
    table["T3"] = replace(table["T3"], perm=4)  # changed without a put: the part is stale
    del table["T9"]
    text.drop("T9")
    del table["T5"]  # gone without a drop
    table["T4"] = tc("T4")  # a few new names: inserted into the kept order
    text.put(table["T4"], to_json(table["T4"]))
    assert text.render(table, version) == whole(table, version)
    for i in range(100):  # many: one sort
        table[f"N{i:03d}"] = tc(f"N{i:03d}", 1 + i % 16)
    assert text.render(table, version) == whole(table, version)


def test_a_compaction_writes_the_whole_text(tmp_path: Path) -> None:
    m = TopicConfigManager(BrokerConfig(), tmp_path)
    m.load()
    m.update_topic_config_list(tc(f"Fill{i:04d}") for i in range(300))
    m.update_topic_config(tc("Fill0007", 2))
    m.delete_topic_config("Fill0100")
    m.persist()
    written = (tmp_path / "config" / "topics.json").read_text(encoding="utf-8")
    assert written == whole(m.topic_config_table, m.version_snapshot())
    assert '"Fill0100"' not in written
    again = TopicConfigManager(BrokerConfig(), tmp_path)
    again.load()
    assert again.topic_config_table == m.topic_config_table
