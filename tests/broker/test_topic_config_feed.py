"""TopicConfigFeed: the changes a slave behind its master's version gets
(broker/topic_config_feed.py), and the TopicConfigManager that records and applies them."""

from __future__ import annotations

import asyncio
import gc
import threading
from pathlib import Path

from rocketq.broker.config import BrokerConfig
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.broker.topic_config_feed import TopicConfigFeed
from rocketq.common.topic_config import TopicConfig


def version(state: int, counter: int) -> dict[str, int]:
    return {"counter": counter, "stateVersion": state, "timestamp": 1}


def put(name: str) -> dict[str, object]:
    return {"op": "put", "topicConfig": {"topicName": name}}


def test_changes_since_a_version_are_all_of_them_or_none() -> None:
    feed = TopicConfigFeed(max_changes=3)
    assert feed.changes_since(2, 0) is None  # nothing recorded
    feed.record([put("A")], version(2, 1))
    feed.record([put("B"), put("C")], version(2, 2))
    feed.record([put("D")], version(2, 3))
    assert feed.changes_since(2, 1) == ([put("B"), put("C"), put("D")], version(2, 3))
    assert feed.changes_since(2, 2) == ([put("D")], version(2, 3))
    assert feed.changes_since(2, 3) is None  # up to date: nothing to send
    assert feed.changes_since(1, 1) is None  # another master's version: the whole table
    feed.record([put("E")], version(2, 4))  # A falls out of the feed
    assert feed.changes_since(2, 0) is None  # the feed lacks change 1
    assert feed.changes_since(2, 1) is not None
    feed.record([put("F")], version(3, 6))  # a new master: its epoch, a counter step skipped
    assert feed.changes_since(3, 4) is None  # the gap (5) is not in the feed
    assert feed.changes_since(3, 5) == ([put("F")], version(3, 6))


def test_the_feed_holds_a_change_as_text_not_an_object_per_record() -> None:
    """A batch create's records are not kept as dicts: every full collection would walk
    them (rocketq.common.heap_freeze)."""
    feed = TopicConfigFeed()
    feed.record([put(f"Kept{i:04d}") for i in range(100)], version(1, 1))
    gc.collect()
    kept = [o for o in gc.get_objects() if isinstance(o, dict) and o.get("op") == "put"]
    assert kept == []
    assert feed.changes_since(1, 0) == ([put(f"Kept{i:04d}") for i in range(100)], version(1, 1))


async def test_a_change_from_another_thread_wakes_the_loop() -> None:
    feed = TopicConfigFeed()
    changed = feed.changed_event()
    writer = threading.Thread(target=feed.record, args=([put("A")], version(1, 1)))
    writer.start()
    await asyncio.wait_for(changed.wait(), 5)
    writer.join()
    assert feed.changed_event() is not changed  # a fresh event for the next change


def test_a_slave_applies_its_masters_changes_at_the_masters_version(tmp_path: Path) -> None:
    config = BrokerConfig(broker_name="broker-a")
    master = TopicConfigManager(config, tmp_path / "master")
    slave = TopicConfigManager(config, tmp_path / "slave")
    master.update_topic_config(TopicConfig(topic_name="Gone"))
    slave.decode(master.encode())
    slave.persist()
    before = master.version_snapshot()
    master.update_topic_config_list([TopicConfig(topic_name="T1"), TopicConfig(topic_name="T2")])
    master.delete_topic_config("Gone")
    since = master.feed.changes_since(before.state_version_or_zero, before.counter)
    assert since is not None
    slave.apply_master_changes(*since)
    assert slave.data_version == master.data_version
    assert set(slave.topic_config_table) == set(master.topic_config_table)
    reloaded = TopicConfigManager(config, tmp_path / "slave")  # journaled on the slave
    reloaded.load()
    assert set(reloaded.topic_config_table) == set(master.topic_config_table)
    assert reloaded.data_version == master.data_version
