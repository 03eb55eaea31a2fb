"""TopicConfigManager: the broker's topic table, persisted as topics.json.

At init the system topics (those of RocketMQ's TopicConfigManager constructor) are placed in the
table (without overriding anything loaded from disk). A send to an unknown topic naming
``defaultTopic`` (TBW102) creates the topic from that template when the template has the INHERIT
bit: min(client queue nums, template write queues) queues, the template's perm without INHERIT.
An admin's updateTopic carries an attribute change (``+key=value``, ``-key``) that
``update_topic_config_by_request`` applies to the stored attributes (``common.attribute``).

Persistence: each change is one line of ``topics.json.journal`` (``topic_config_journal``), so
a create writes the same bytes at 50,000 topics as at 10; the line is written before the change
returns and fsynced by group commit, waited for with SYNC_FLUSH (``sync_flush``) and right
after in a flusher thread with ASYNC_FLUSH, as the store treats messages. ``persist`` (at
start, at shutdown, and in a background thread once the journal holds as many entries as the
table has topics) compacts the table into ``topics.json`` in RocketMQ's format and empties
the journal.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from rocketq.broker.config import BrokerConfig
from rocketq.broker.config_manager import ConfigManager
from rocketq.broker.topic_config_feed import Records, TopicConfigFeed
from rocketq.broker.topic_config_journal import COMPACTOR, TopicConfigJournal
from rocketq.broker.topic_config_text import TopicsJsonText
from rocketq.common.attribute import TOPIC_ATTRIBUTES, alter_current_attributes
from rocketq.common.heap_freeze import HEAP
from rocketq.common.topic import (
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    BENCHMARK_TOPIC,
    NOT_ALLOWED_SEND_TOPICS,
    OFFSET_MOVED_EVENT,
    REPLY_TOPIC_POSTFIX,
    SCHEDULE_QUEUE_NUMS,
    SCHEDULE_TOPIC,
    SELF_TEST_TOPIC,
    SYSTEM_TOPIC_PREFIX,
    TRANS_CHECK_MAX_TIME_TOPIC,
)
from rocketq.common.topic_config import PERM_INHERIT, PERM_READ, PERM_WRITE, TopicConfig
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.json_body import from_json, to_json
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper

log = logging.getLogger(__name__)

#: the journal is compacted into topics.json once it holds this many entries, or as many as
#: topics.json held at the last compaction if more (compaction costs O(1) per change, amortized)
COMPACT_MIN_ENTRIES = 1024


class TopicConfigManager(ConfigManager):
    """The topic table (thread-safe; every change journaled before it returns, and fsynced
    before it returns when ``sync_flush``)."""

    def __init__(self, config: BrokerConfig, store_root: str | os.PathLike[str]) -> None:
        super().__init__(os.path.join(store_root, "config", "topics.json"))
        self.config = config
        self.data_version = DataVersion()
        self.topic_config_table: dict[str, TopicConfig] = {}
        self._lock = threading.RLock()
        self.journal = TopicConfigJournal(self.path)
        self.text = TopicsJsonText()  # topics.json's text, per topic encoded once
        self.feed = TopicConfigFeed()  # recent changes, for controller-mode slaves' polls
        self.compact_min_entries = COMPACT_MIN_ENTRIES
        #: SYNC_FLUSH: a change returns once fsynced; else the fsync follows in a thread
        self.sync_flush = False
        self._compaction: threading.Event | None = None  # set when the running one ends
        self._compacted_size = 0  # topics in topics.json as last compacted
        #: changed since the last registration: what register_broker_all_soon sends
        self._unregistered: dict[str, TopicConfig] = {}
        self.system_topics: set[str] = set()
        self._add_system_topics()

    def _add_system_topics(self) -> None:
        c = self.config
        rw = PERM_READ | PERM_WRITE
        inherit = rw | PERM_INHERIT
        topics = [
            TopicConfig(topic_name=SELF_TEST_TOPIC, read_queue_nums=1, write_queue_nums=1),
            TopicConfig(topic_name=BENCHMARK_TOPIC, read_queue_nums=1024, write_queue_nums=1024),
            TopicConfig(
                topic_name=c.broker_cluster_name,
                read_queue_nums=16,
                write_queue_nums=16,
                perm=inherit if c.cluster_topic_enable else PERM_INHERIT,
            ),
            TopicConfig(
                topic_name=c.broker_name,
                read_queue_nums=1,
                write_queue_nums=1,
                perm=inherit if c.broker_topic_enable else PERM_INHERIT,
            ),
            TopicConfig(topic_name=OFFSET_MOVED_EVENT, read_queue_nums=1, write_queue_nums=1),
            TopicConfig(
                topic_name=SCHEDULE_TOPIC,
                read_queue_nums=SCHEDULE_QUEUE_NUMS,
                write_queue_nums=SCHEDULE_QUEUE_NUMS,
            ),
            TopicConfig(
                topic_name=f"{c.broker_cluster_name}_{REPLY_TOPIC_POSTFIX}",
                read_queue_nums=1,
                write_queue_nums=1,
            ),
        ]
        if c.auto_create_topic_enable:
            topics.append(
                TopicConfig(
                    topic_name=AUTO_CREATE_TOPIC_KEY_TOPIC,
                    read_queue_nums=c.default_topic_queue_nums,
                    write_queue_nums=c.default_topic_queue_nums,
                    perm=inherit,
                )
            )
        if c.trace_topic_enable:
            topics.append(
                TopicConfig(
                    topic_name=c.msg_trace_topic_name, read_queue_nums=1, write_queue_nums=1
                )
            )
        for tc in topics:
            self.topic_config_table[tc.topic_name] = tc
            self.text.known(tc.topic_name)
            self.system_topics.add(tc.topic_name)
        self.system_topics |= NOT_ALLOWED_SEND_TOPICS | {TRANS_CHECK_MAX_TIME_TOPIC}

    def is_system_topic(self, topic: str) -> bool:
        return topic in self.system_topics or topic.startswith(SYSTEM_TOPIC_PREFIX)

    def select_topic_config(self, topic: str) -> TopicConfig | None:
        return self.topic_config_table.get(topic)

    def update_topic_config(self, tc: TopicConfig) -> DataVersion:
        """Put ``tc``; returns the table's version after the change (durable on return)."""
        return self.update_topic_config_list([tc])

    def update_topic_config_list(self, tcs: Iterable[TopicConfig]) -> DataVersion:
        """Put every config of ``tcs`` as one version step and one journal append (RocketMQ
        5's updateTopicConfigList); returns the version after the change."""
        version, position = self._put(tcs)
        self._make_durable(position)
        return version

    def _put(self, tcs: Iterable[TopicConfig]) -> tuple[DataVersion, int]:
        """``update_topic_config_list`` up to the write: (the version after, the journal
        position to sync; 0 when nothing changed)."""
        with self._lock:
            position = 0
            records = []
            for tc in tcs:
                old = self.topic_config_table.get(tc.topic_name)
                self.topic_config_table[tc.topic_name] = tc
                self._unregistered[tc.topic_name] = tc
                log.info("topic config %s: %s -> %s", tc.topic_name, old, tc)
                obj = to_json(tc)
                self.text.put(tc, obj)
                records.append({"op": "put", "topicConfig": obj})
            if records:
                self.data_version.next_version()
                position = self._journal_append(records)
            HEAP.grown(len(records))  # long-lived TopicConfigs: frozen after a growth step
            return self.version_snapshot(), position

    def _make_durable(self, position: int) -> None:
        """Outside the lock (so concurrent changes share one fsync): wait for the fsync of
        the journal up to ``position`` with SYNC_FLUSH, else have the flusher do it."""
        HEAP.settle()  # a growth step freezes the table here, outside the lock
        if not position:
            return
        if self.sync_flush:
            self.journal.sync(position)
        else:
            self.journal.sync_soon()

    def update_topic_config_by_request(
        self, tc: TopicConfig, modification: Mapping[str, str]
    ) -> TopicConfig:
        """TopicConfigManager.updateTopicConfig of an admin request: the stored attributes
        altered by ``modification`` (AttributeRefusedError when refused); an unchanged config
        is not written again."""
        return self.update_topic_configs_by_request([(tc, modification)])[0][0]

    def update_topic_configs_by_request(
        self, items: Iterable[tuple[TopicConfig, Mapping[str, str]]]
    ) -> tuple[list[TopicConfig], DataVersion]:
        """``update_topic_config_by_request`` of each item, all or none (a refused attribute
        change refuses the batch), in one journal append; returns the configs as stored and
        the table's version after the change."""
        position = 0
        with self._lock:
            finals: list[TopicConfig] = []
            changed: list[TopicConfig] = []
            for tc, modification in items:
                old = self.topic_config_table.get(tc.topic_name)
                current = (old.attributes or {}) if old else {}
                final = alter_current_attributes(
                    old is None, TOPIC_ATTRIBUTES, current, modification
                )
                new = replace(tc, attributes=final or None)
                finals.append(new)
                if new != old:
                    changed.append(new)
            version, position = self._put(changed)
        self._make_durable(position)
        return finals, version

    def delete_topic_config(self, topic: str) -> bool:
        with self._lock:
            if self.topic_config_table.pop(topic, None) is None:
                return False
            self.text.drop(topic)
            self.data_version.next_version()
            position = self._journal_append([{"op": "delete", "topic": topic}])
        self._make_durable(position)
        return True

    def apply_master_changes(self, records: Records, version: dict[str, Any]) -> None:
        """A controller-mode slave: its master's changes since the version this table holds
        (``topic_config_feed``), applied and journaled as one change at the master's version
        ``version`` (durable on return as a change made here)."""
        with self._lock:
            for record in records:
                self._apply(record)
            self.data_version = DataVersion.from_json(version)
            position = self._journal_append(records) if records else 0
        HEAP.grown(len(records))
        self._make_durable(position)

    def take_unregistered(self) -> tuple[list[TopicConfig], DataVersion]:
        """The configs changed since the last call and the table's version (for an
        incremental registration; a full one takes them too, as it carries them)."""
        with self._lock:
            configs = list(self._unregistered.values())
            self._unregistered.clear()
            return configs, self.version_snapshot()

    def version_snapshot(self) -> DataVersion:
        with self._lock:
            v = self.data_version
            return DataVersion(
                timestamp=v.timestamp, counter=v.counter, state_version=v.state_version
            )

    # ------------------------------------------------------------------ persistence

    def _journal_append(self, records: list[dict[str, Any]]) -> int:
        """Under the lock: the change's records with the version after it, written (the
        position to sync is returned); a background compaction once the journal is as long
        as the table."""
        version = self.data_version.to_json()
        for record in records:
            record["dataVersion"] = version
        position = self.journal.append(records)
        self.feed.record(records, version)
        threshold = max(self.compact_min_entries, self._compacted_size)
        if self.journal.entry_count >= threshold and self._compaction is None:
            self._compaction = threading.Event()
            COMPACTOR.submit(self._compact_in_background)
        return position

    def _compact_in_background(self) -> None:
        started = time.perf_counter()
        try:
            self.persist(reopen=True)  # changes go on: the next journal opened now
            log.info(
                "%s compacted: %d topics, %.0f ms",
                self.path.name,
                self._compacted_size,
                (time.perf_counter() - started) * 1000,
            )
        except OSError:
            log.exception("compacting %s failed; the journal keeps the changes", self.path)
        finally:
            with self._lock:
                done, self._compaction = self._compaction, None
            if done is not None:
                done.set()

    def persist(self, *, reopen: bool = False) -> None:
        """Compact: the table to ``topics.json`` (RocketMQ's format, ``.bak`` kept) and the
        journal emptied. Only the version and the journal's rotation hold the table's lock;
        the text is read from the live table a piece at a time (no copy of it: at 100,000
        topics one held the GIL 8 ms), which is right once the new journal is replayed over
        it (``TopicsJsonText.chunks``)."""
        with self._file_lock:
            with self._lock:
                table = self.topic_config_table
                version = self.version_snapshot()
                self.journal.rotate(reopen)
                self._compacted_size = len(table)
                cut = self.text.cut(table)
            self._write_pieces(self.text.chunks(table, version, cut))
            self.journal.drop_rotated()

    def load(self) -> bool:
        """``topics.json`` (or ``.bak``), then the journal's changes replayed; a journal found
        is compacted at once (so later appends never follow a torn line)."""
        COMPACTOR.start()  # now, not by the create that starts the first compaction
        loaded = super().load()
        records = self.journal.replay()
        with self._lock:
            for record in records:
                self._apply(record)
        HEAP.grown(len(records))
        HEAP.settle()
        if records or self.journal.path.exists() or self.journal.rotated_path.exists():
            log.info("%s: %d journaled topic changes replayed", self.path, len(records))
            self.persist()
        return loaded or bool(records)

    def _apply(self, record: dict[str, Any]) -> None:
        op = record.get("op")
        if op == "put" and isinstance(record.get("topicConfig"), dict):
            tc = from_json(TopicConfig, record["topicConfig"])
            self.topic_config_table[tc.topic_name] = tc
            self.text.put(tc, to_json(tc))  # encoded now, not all at once by the compaction
        elif op == "delete":
            self.topic_config_table.pop(str(record.get("topic")), None)
            self.text.drop(str(record.get("topic")))
        else:
            log.warning("%s: unknown journal entry %r skipped", self.journal.path, op)
            return
        version = record.get("dataVersion")
        if isinstance(version, dict):
            self.data_version = DataVersion.from_json(version)

    def wait_for_compaction(self) -> None:
        """Return once no background compaction runs (tests, shutdown)."""
        compaction = self._compaction
        if compaction is not None:
            compaction.wait()

    def create_topic_in_send_message_method(
        self, topic: str, default_topic: str, client_queue_nums: int, topic_sys_flag: int = 0
    ) -> TopicConfig | None:
        """Create ``topic`` from the template ``default_topic``; None when not allowed."""
        with self._lock:
            existing = self.topic_config_table.get(topic)
            if existing is not None:
                return existing
            template = self.topic_config_table.get(default_topic)
            if template is None or not template.perm & PERM_INHERIT:
                log.warning(
                    "create topic %s: template %s missing or not inheritable", topic, default_topic
                )
                return None
            if (
                default_topic == AUTO_CREATE_TOPIC_KEY_TOPIC
                and not self.config.auto_create_topic_enable
            ):
                return None
            queue_nums = max(1, min(client_queue_nums, template.write_queue_nums))
            tc = TopicConfig(
                topic_name=topic,
                read_queue_nums=queue_nums,
                write_queue_nums=queue_nums,
                perm=template.perm & ~PERM_INHERIT,
                topic_sys_flag=topic_sys_flag,
            )
            _, position = self._put([tc])
        self._make_durable(position)
        return tc

    def create_topic_in_send_message_back_method(
        self, topic: str, queue_nums: int, perm: int = PERM_READ | PERM_WRITE
    ) -> TopicConfig:
        """Create a retry or DLQ topic (or any internal topic) if it does not exist yet."""
        with self._lock:
            existing = self.topic_config_table.get(topic)
            if existing is not None:
                return existing
            tc = TopicConfig(
                topic_name=topic, read_queue_nums=queue_nums, write_queue_nums=queue_nums, perm=perm
            )
            _, position = self._put([tc])
        self._make_durable(position)
        return tc

    def build_serialize_wrapper(self) -> TopicConfigSerializeWrapper:
        """A snapshot of the table (REGISTER_BROKER body, GET_ALL_TOPIC_CONFIG, topics.json)."""
        with self._lock:
            return TopicConfigSerializeWrapper(
                topic_config_table=dict(self.topic_config_table),
                data_version=DataVersion(
                    timestamp=self.data_version.timestamp,
                    counter=self.data_version.counter,
                    state_version=self.data_version.state_version,
                ),
            )

    def encode(self) -> dict[str, Any]:
        return self.build_serialize_wrapper().to_json()

    def decode(self, obj: dict[str, Any]) -> None:
        table = obj.get("topicConfigTable") or {}
        with self._lock:
            for name, item in table.items():
                if isinstance(item, dict):
                    self.topic_config_table[str(name)] = from_json(TopicConfig, item)
                    self.text.known(str(name))
            version = obj.get("dataVersion")
            self.data_version = (
                DataVersion.from_json(version) if isinstance(version, dict) else DataVersion()
            )


def with_queue_nums(tc: TopicConfig, nums: int) -> TopicConfig:
    return replace(tc, read_queue_nums=nums, write_queue_nums=nums)
