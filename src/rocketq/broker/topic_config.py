"""TopicConfigManager: the broker's topic table, persisted as topics.json.

At init the system topics (those of RocketMQ's TopicConfigManager constructor) are placed in the
table (without overriding anything loaded from disk). A send to an unknown topic naming
``defaultTopic`` (TBW102) creates the topic from that template when the template has the INHERIT
bit: min(client queue nums, template write queues) queues, the template's perm without INHERIT.
An admin's updateTopic carries an attribute change (``+key=value``, ``-key``) that
``update_topic_config_by_request`` applies to the stored attributes (``common.attribute``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rocketq.broker.config import BrokerConfig
from rocketq.broker.config_manager import ConfigManager
from rocketq.common.attribute import TOPIC_ATTRIBUTES, alter_current_attributes
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
from rocketq.remoting.protocol.json_body import from_json
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper

log = logging.getLogger(__name__)


class TopicConfigManager(ConfigManager):
    """The topic table (thread-safe; persisted on every change)."""

    def __init__(self, config: BrokerConfig, store_root: str | os.PathLike[str]) -> None:
        super().__init__(os.path.join(store_root, "config", "topics.json"))
        self.config = config
        self.data_version = DataVersion()
        self.topic_config_table: dict[str, TopicConfig] = {}
        self._lock = threading.RLock()
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
            self.system_topics.add(tc.topic_name)
        self.system_topics |= NOT_ALLOWED_SEND_TOPICS | {TRANS_CHECK_MAX_TIME_TOPIC}

    def is_system_topic(self, topic: str) -> bool:
        return topic in self.system_topics or topic.startswith(SYSTEM_TOPIC_PREFIX)

    def select_topic_config(self, topic: str) -> TopicConfig | None:
        return self.topic_config_table.get(topic)

    def update_topic_config(self, tc: TopicConfig) -> None:
        with self._lock:
            old = self.topic_config_table.get(tc.topic_name)
            self.topic_config_table[tc.topic_name] = tc
            log.info("topic config %s: %s -> %s", tc.topic_name, old, tc)
            self.data_version.next_version()
            self.persist()

    def update_topic_config_by_request(
        self, tc: TopicConfig, modification: Mapping[str, str]
    ) -> TopicConfig:
        """TopicConfigManager.updateTopicConfig of an admin request: the stored attributes
        altered by ``modification`` (AttributeRefusedError when refused); an unchanged config
        is not written again."""
        with self._lock:
            old = self.topic_config_table.get(tc.topic_name)
            final = alter_current_attributes(
                old is None, TOPIC_ATTRIBUTES, (old.attributes or {}) if old else {}, modification
            )
            new = replace(tc, attributes=final or None)
            if new != old:
                self.update_topic_config(new)
            return new

    def delete_topic_config(self, topic: str) -> bool:
        with self._lock:
            if self.topic_config_table.pop(topic, None) is None:
                return False
            self.data_version.next_version()
            self.persist()
            return True

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
            self.update_topic_config(tc)
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
            self.update_topic_config(tc)
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
            version = obj.get("dataVersion")
            self.data_version = (
                DataVersion.from_json(version) if isinstance(version, dict) else DataVersion()
            )


def with_queue_nums(tc: TopicConfig, nums: int) -> TopicConfig:
    return replace(tc, read_queue_nums=nums, write_queue_nums=nums)
