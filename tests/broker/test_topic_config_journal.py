"""The topic table's journal: a change writes one line whatever the table's size, fsynced by
group commit (waited for with SYNC_FLUSH, after the answer with ASYNC_FLUSH), replays after a
crash (torn last line dropped), compacts into topics.json, and an answered create survives
kill -9 of a broker process."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from pathlib import Path

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.broker import BrokerConfig, topic_config_journal
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol import fastjson
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.store import small_store_properties


def manager(root: Path) -> TopicConfigManager:
    return TopicConfigManager(BrokerConfig(), root)


def topic(name: str, queues: int = 8) -> TopicConfig:
    return TopicConfig(topic_name=name, read_queue_nums=queues, write_queue_nums=queues)


def bytes_of_one_create(root: Path, table_size: int) -> tuple[int, int]:
    """Journal bytes one create writes on a table of ``table_size`` topics, and how many
    bytes of topics.json it rewrote (0: not touched)."""
    m = manager(root)
    m.compact_min_entries = 10 * table_size  # no background compaction during the probe
    m.update_topic_config_list(topic(f"Fill{i:06d}") for i in range(table_size))
    m.persist()
    before = (root / "config" / "topics.json").stat()
    written = m.journal.bytes_written
    m.update_topic_config(topic("Probe000000"))
    after = (root / "config" / "topics.json").stat()
    rewritten = 0 if (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino) else 1
    return m.journal.bytes_written - written, rewritten * after.st_size


def test_a_create_writes_the_same_bytes_at_5000_topics_as_at_10(tmp_path: Path) -> None:
    small = bytes_of_one_create(tmp_path / "small", 10)
    large = bytes_of_one_create(tmp_path / "large", 5000)
    assert small[1] == large[1] == 0  # topics.json untouched by a create
    assert 0 < small[0] < 400
    assert large[0] == small[0]


def test_journaled_changes_replay_after_a_crash(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.update_topic_config(topic("Kept", 4))
    m.update_topic_config(topic("Changed", 2))
    m.update_topic_config(topic("Changed", 6))
    m.update_topic_config(topic("Gone"))
    assert m.delete_topic_config("Gone")
    version = m.version_snapshot()
    assert not (tmp_path / "config" / "topics.json").exists()  # never compacted: a crash
    again = manager(tmp_path)
    assert again.load()
    assert again.topic_config_table["Kept"].write_queue_nums == 4
    assert again.topic_config_table["Changed"].write_queue_nums == 6
    assert "Gone" not in again.topic_config_table
    assert again.data_version == version
    # the load compacted: topics.json holds the table in RocketMQ's format, the journal is gone
    written = fastjson.loads((tmp_path / "config" / "topics.json").read_text())
    assert written["topicConfigTable"]["Changed"]["writeQueueNums"] == 6
    assert not again.journal.path.exists()
    assert not again.journal.rotated_path.exists()


def test_a_torn_last_entry_is_dropped_and_later_changes_still_replay(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.update_topic_config(topic("Answered"))
    with open(m.journal.path, "ab") as f:  # a crash inside the next append, never answered
        f.write(b'0badc0de {"op":"put","topicConfig":{"topicName":"Torn"')
    after_crash = manager(tmp_path)
    after_crash.load()
    assert "Answered" in after_crash.topic_config_table
    assert "Torn" not in after_crash.topic_config_table
    after_crash.update_topic_config(topic("Later"))
    again = manager(tmp_path)
    again.load()
    assert {"Answered", "Later"} <= set(again.topic_config_table)


def test_a_corrupt_entry_stops_the_replay_of_its_file(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.update_topic_config(topic("First"))
    m.update_topic_config(topic("Second"))
    data = bytearray(m.journal.path.read_bytes())
    second = data.index(b"Second")
    data[second] = ord("X")  # the CRC no longer matches
    m.journal.path.write_bytes(bytes(data))
    again = manager(tmp_path)
    again.load()
    assert "First" in again.topic_config_table
    assert "Second" not in again.topic_config_table
    assert "Xecond" not in again.topic_config_table


def test_the_journal_compacts_into_topics_json_in_the_background(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.compact_min_entries = 0  # compact once the journal is as long as the last snapshot
    m.persist()
    for i in range(3 * len(m.topic_config_table)):
        m.update_topic_config(topic(f"T{i:04d}"))
    m.wait_for_compaction()
    written = fastjson.loads((tmp_path / "config" / "topics.json").read_text())
    assert len(written["topicConfigTable"]) >= len(m.topic_config_table) // 2
    assert m.journal.entry_count < len(m.topic_config_table)
    again = manager(tmp_path)
    again.load()
    assert again.topic_config_table == m.topic_config_table


def test_a_crash_between_rotation_and_snapshot_loses_nothing(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.update_topic_config(topic("BeforeRotation"))
    m.journal.rotate()  # compaction began: the journal set aside, topics.json not yet written
    m.update_topic_config(topic("AfterRotation"))
    m.journal.rotate()  # a second failed compaction appends to the one set aside
    m.update_topic_config(topic("Newest"))
    again = manager(tmp_path)
    again.load()
    assert {"BeforeRotation", "AfterRotation", "Newest"} <= set(again.topic_config_table)
    assert not again.journal.rotated_path.exists()


@pytest.mark.timeout(60)
async def test_an_answered_create_survives_kill_9_of_the_broker(tmp_path: Path) -> None:
    store = tmp_path / "store"
    conf = {
        "brokerName": "broker-a",
        "brokerIP1": "127.0.0.1",
        "storePathRootDir": str(store),
        **small_store_properties(1024 * 1024),
    }
    broker = BrokerProcess(tmp_path / "proc", conf)
    await asyncio.to_thread(broker.start)
    try:
        async with AsyncAdminClient() as admin:
            await admin.create_and_update_topic_config(broker.addr, topic("Single", 3))
            await admin.create_and_update_topic_config_list(
                broker.addr, [topic("ListA", 2), topic("ListB", 5)]
            )
    finally:
        assert broker.kill() is not None
    assert not (store / "config" / "topics.json").read_text().count('"Single"')
    again = manager(store)
    again.load()
    table = again.topic_config_table
    assert (table["Single"].write_queue_nums, table["ListB"].write_queue_nums) == (3, 5)
    assert "ListA" in table


class GatedFsync:
    """``os.fsync`` for the journal module: each fsync of a file of the test's (not of a
    directory, nor another test's journal still being flushed) waits for ``release`` (the
    test's hand on the disk) and is counted."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0
        self._real = os.fsync

    def __call__(self, fd: int) -> None:
        mine = os.readlink(f"/proc/self/fd/{fd}").startswith(self.root)
        if not mine or not stat.S_ISREG(os.fstat(fd).st_mode):
            self._real(fd)
            return
        self.calls += 1
        self.entered.set()
        assert self.release.wait(10), "the test never released the fsync"
        self._real(fd)


@pytest.fixture
def gated_fsync(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> GatedFsync:
    gate = GatedFsync(tmp_path)
    monkeypatch.setattr(topic_config_journal.os, "fsync", gate)
    return gate


def test_an_async_flush_create_returns_written_before_its_fsync(
    tmp_path: Path, gated_fsync: GatedFsync
) -> None:
    m = manager(tmp_path)
    m.update_topic_config(topic("Written"))  # returns while the flusher's fsync is held
    assert gated_fsync.entered.wait(10)
    # in the file (the page cache), whole: a process killed now replays it
    replayed = manager(tmp_path).journal.replay()
    assert [r["topicConfig"]["topicName"] for r in replayed] == ["Written"]
    gated_fsync.release.set()
    m.journal.sync(m.journal.bytes_written)  # the flusher's fsync covers it
    assert gated_fsync.calls == 1


def test_a_sync_flush_create_returns_only_after_its_fsync(
    tmp_path: Path, gated_fsync: GatedFsync
) -> None:
    m = manager(tmp_path)
    m.sync_flush = True
    creating = threading.Thread(target=m.update_topic_config, args=(topic("Synced"),))
    creating.start()
    assert gated_fsync.entered.wait(10)
    creating.join(0.2)
    assert creating.is_alive()  # held by its fsync
    gated_fsync.release.set()
    creating.join(10)
    assert not creating.is_alive()


def test_concurrent_sync_flush_creates_share_one_fsync(
    tmp_path: Path, gated_fsync: GatedFsync
) -> None:
    m = manager(tmp_path)
    m.sync_flush = True
    first = threading.Thread(target=m.update_topic_config, args=(topic("First"),))
    first.start()
    assert gated_fsync.entered.wait(10)  # the first create's fsync is on the disk
    later = [
        threading.Thread(target=m.update_topic_config, args=(topic(f"Later{i}"),)) for i in range(4)
    ]
    for t in later:
        t.start()
    while m.journal.entry_count < 5:  # the four wrote their lines and wait for an fsync
        later[0].join(0.01)
    gated_fsync.release.set()
    for t in (first, *later):
        t.join(10)
        assert not t.is_alive()
    assert gated_fsync.calls == 2  # the first create's, then one for the four


def journal_descriptors(m: TopicConfigManager) -> list[str]:
    """This process's open descriptors on the journal's files (other tests' threads may
    open and close others meanwhile: only these are counted)."""
    names = (str(m.journal.path), str(m.journal.rotated_path))
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since the listing
            continue
        if target.startswith(names):
            found.append(target)
    return found


def test_a_compaction_leaves_no_journal_descriptor_open(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.update_topic_config(topic("Open"))
    m.journal.sync(m.journal.bytes_written)  # the flusher's fsync (on a dup) has ended
    assert journal_descriptors(m) == [str(m.journal.path)]  # open for appends
    m.persist()
    m.journal.sync(m.journal.bytes_written)  # the snapshot holds the line: nothing to wait for
    assert journal_descriptors(m) == []


def test_a_background_compaction_opens_the_next_journal_itself(tmp_path: Path) -> None:
    """The create after the one that starts a compaction appends to a journal the compactor
    already created (creating it in the directory the compaction renames and fsyncs in cost
    that create 0.3-1.2 ms); its changes and the later ones survive a crash (no persist)."""
    m = manager(tmp_path)
    m.compact_min_entries = 8
    m.update_topic_config_list(topic(f"Before{i}") for i in range(8))  # starts a compaction
    m.wait_for_compaction()
    assert m.journal.path.exists()
    assert m.journal.path.stat().st_size == 0
    m.update_topic_config(topic("After", 3))
    assert m.journal.path.stat().st_size > 0
    again = manager(tmp_path)  # a restart without a clean shutdown
    again.load()
    assert again.topic_config_table["After"].read_queue_nums == 3
    assert {f"Before{i}" for i in range(8)} <= set(again.topic_config_table)
