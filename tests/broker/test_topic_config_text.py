"""topics.json joined from per-topic parts is the text the whole wrapper pretty-prints to,
whatever changed between compactions (puts, changes made without a put, deletes), and a
manager's compaction writes it."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker import BrokerConfig, topic_config_text
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.broker.topic_config_text import ENCODE_EVERY, YIELD_EVERY, TopicsJsonText
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


def test_a_compaction_renders_in_pieces_of_bounded_parts() -> None:
    """No piece is a join of the whole table (one GIL-holding call of 8-28 ms at 100,000
    topics): each holds at most YIELD_EVERY topics, and they join to the whole text."""
    text = TopicsJsonText()
    version = DataVersion(timestamp=1700000000000, counter=3)
    table: dict[str, TopicConfig] = {}
    for i in range(3 * YIELD_EVERY + 5):  # names not in order: the merge's path
        name = f"P{(i * 7919) % 100000:05d}"
        table[name] = tc(name)
        text.put(table[name], to_json(table[name]))
    pieces = list(text.chunks(table, version, text.cut(table)))
    assert "".join(pieces) == whole(table, version)
    assert len(pieces) >= 4
    assert max(piece.count('\n\t\t"P') for piece in pieces) <= YIELD_EVERY


def test_changes_made_during_a_compaction_are_right_after_a_reload(tmp_path: Path) -> None:
    """The render reads the live table: whatever a change made after the cut left in the
    file, the reload (file, then the journal since the cut) gives the table as changed."""
    m = TopicConfigManager(BrokerConfig(), tmp_path)
    m.load()
    m.update_topic_config_list(tc(f"Live{i:05d}") for i in range(3 * YIELD_EVERY))
    m.wait_for_compaction()  # the one this many changes start: not beside the steps below
    with m._lock:  # persist's first step, then its pieces written with changes in between
        table, version = m.topic_config_table, m.version_snapshot()
        m.journal.rotate()
        cut = m.text.cut(table)
    pieces = m.text.chunks(table, version, cut)
    first = next(pieces)
    m.update_topic_config(tc("Live00003", 2))  # already written: the journal has the change
    m.delete_topic_config("Live01000")  # not written yet
    m.update_topic_config(tc("Live01001", 5))
    m.update_topic_config(tc("Fresh", 1))  # new after the cut: the journal only
    m.delete_topic_config("Live00004")
    m._write_pieces([first, *pieces])
    m.journal.drop_rotated()
    written = (tmp_path / "config" / "topics.json").read_text(encoding="utf-8")
    assert '"Live01000"' not in written
    assert '"Fresh"' not in written
    again = TopicConfigManager(BrokerConfig(), tmp_path)
    again.load()
    assert again.topic_config_table == m.topic_config_table
    assert again.topic_config_table["Live00003"].read_queue_nums == 2
    assert "Live00004" not in again.topic_config_table


def test_a_compaction_after_a_load_encodes_between_pauses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a restart from topics.json alone no topic has a part yet: the first compaction
    encodes every one (~0.1 ms each), and lets the GIL go every ENCODE_EVERY of them, not
    only every YIELD_EVERY names (the pauses counted, each still made)."""
    m = TopicConfigManager(BrokerConfig(), tmp_path)
    m.load()
    m.update_topic_config_list(tc(f"Load{i:05d}") for i in range(2 * YIELD_EVERY))
    m.wait_for_compaction()  # the one this many changes start, before another manager's
    m.persist()
    again = TopicConfigManager(BrokerConfig(), tmp_path)
    again.load()
    pauses: list[float] = []
    real = topic_config_text.pause

    def counted() -> None:
        pauses.append(time.monotonic())
        real()

    monkeypatch.setattr(topic_config_text, "pause", counted)
    again.persist()
    written = (tmp_path / "config" / "topics.json").read_text(encoding="utf-8")
    assert written == whole(again.topic_config_table, again.version_snapshot())
    assert len(pauses) >= len(again.topic_config_table) // ENCODE_EVERY


def test_a_render_left_midway_keeps_the_new_names_for_the_next() -> None:
    """A compaction whose write fails stops reading the pieces: the names it had taken as new
    are merged by the next render (else they would be missing from every later topics.json
    while the journal that held them is dropped)."""
    text = TopicsJsonText()
    version = DataVersion(timestamp=1700000000000, counter=5)
    table: dict[str, TopicConfig] = {}
    for i in range(2 * YIELD_EVERY):
        table[f"M{i:05d}"] = tc(f"M{i:05d}")
        text.put(table[f"M{i:05d}"], to_json(table[f"M{i:05d}"]))
    pieces = text.chunks(table, version, text.cut(table))
    next(pieces)
    pieces.close()  # the writer's OSError: the generator is left
    table["Late"] = tc("Late")
    text.put(table["Late"], to_json(table["Late"]))
    assert text.render(table, version) == whole(table, version)
