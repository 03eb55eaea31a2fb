"""TopicConfig and TopicConfigManager: the broker's topic table, persisted as topics.json.

At init the system topics of store.md §9 are placed in the table (without overriding anything
loaded from disk). A send to an unknown topic naming ``defaultTopic`` (TBW102) creates the
topic from that template when the template has the INHERIT bit: min(client queue nums,
template write queues) queues, the template's perm without INHERIT.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass, replace
from typing import Any

from rocketq.broker.config import BrokerConfig
from rocketq.broker.config_manager import ConfigManager, DataVersion

log = logging.getLogger(__name__)

PERM_PRIORITY = 0x8
PERM_READ = 0x4
PERM_WRITE = 0x2
PERM_INHERIT = 0x1

AUTO_CREATE_TOPIC_KEY_TOPIC = "TBW102"
SELF_TEST_TOPIC = "SELF_TEST_TOPIC"
BENCHMARK_TOPIC = "BenchmarkTest"
OFFSET_MOVED_EVENT = "OFFSET_MOVED_EVENT"
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
DLQ_GROUP_TOPIC_PREFIX = "%DLQ%"
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"
SCHEDULE_QUEUE_NUMS = 18

# topics clients may not send to (TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET)
NOT_ALLOWED_SEND_TOPICS = frozenset(
    {
        SCHEDULE_TOPIC,
        TRANS_HALF_TOPIC,
        TRANS_OP_HALF_TOPIC,
        TRANS_CHECK_MAX_TIME_TOPIC,
        SELF_TEST_TOPIC,
        OFFSET_MOVED_EVENT,
    }
)
TOPIC_NAME_PATTERN = re.compile(r"^[%|a-zA-Z0-9_-]+$")
TOPIC_MAX_LENGTH = 127


def validate_topic(topic: str) -> str | None:
    """None when ``topic`` is a valid name, else the reason (TopicValidator.validateTopic)."""
    if not topic:
        return "the topic name is empty"
    if not TOPIC_NAME_PATTERN.match(topic):
        return f"the topic [{topic}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$"
    if len(topic) > TOPIC_MAX_LENGTH:
        return f"the topic [{topic}] is longer than {TOPIC_MAX_LENGTH} characters"
    return None


def retry_topic(group: str) -> str:
    return RETRY_GROUP_TOPIC_PREFIX + group


def dlq_topic(group: str) -> str:
    return DLQ_GROUP_TOPIC_PREFIX + group


@dataclass(frozen=True, kw_only=True, slots=True)
class TopicConfig:
    topic_name: str
    read_queue_nums: int = 16
    write_queue_nums: int = 16
    perm: int = PERM_READ | PERM_WRITE
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int = 0
    order: bool = False

    @property
    def readable(self) -> bool:
        return bool(self.perm & PERM_READ)

    @property
    def writeable(self) -> bool:
        return bool(self.perm & PERM_WRITE)

    def to_json(self) -> dict[str, Any]:
        return {
            "order": self.order,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicFilterType": self.topic_filter_type,
            "topicName": self.topic_name,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TopicConfig:
        return cls(
            topic_name=str(obj["topicName"]),
            read_queue_nums=int(obj.get("readQueueNums", 16)),
            write_queue_nums=int(obj.get("writeQueueNums", 16)),
            perm=int(obj.get("perm", 6)),
            topic_filter_type=str(obj.get("topicFilterType", "SINGLE_TAG")),
            topic_sys_flag=int(obj.get("topicSysFlag", 0)),
            order=bool(obj.get("order", False)),
        )


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
        return topic in self.system_topics or topic.startswith("rmq_sys_")

    def select_topic_config(self, topic: str) -> TopicConfig | None:
        return self.topic_config_table.get(topic)

    def update_topic_config(self, tc: TopicConfig) -> None:
        with self._lock:
            old = self.topic_config_table.get(tc.topic_name)
            self.topic_config_table[tc.topic_name] = tc
            log.info("topic config %s: %s -> %s", tc.topic_name, old, tc)
            self.data_version.next_version()
            self.persist()

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

    def build_serialize_wrapper(self) -> dict[str, Any]:
        """TopicConfigSerializeWrapper as JSON (REGISTER_BROKER body, GET_ALL_TOPIC_CONFIG)."""
        with self._lock:
            return self.encode()

    def encode(self) -> dict[str, Any]:
        return {
            "dataVersion": self.data_version.to_json(),
            "topicConfigTable": {n: tc.to_json() for n, tc in self.topic_config_table.items()},
        }

    def decode(self, obj: dict[str, Any]) -> None:
        table = obj.get("topicConfigTable") or {}
        with self._lock:
            for name, item in table.items():
                if isinstance(item, dict):
                    self.topic_config_table[str(name)] = TopicConfig.from_json(item)
            self.data_version = DataVersion.from_json(obj.get("dataVersion"))


def with_queue_nums(tc: TopicConfig, nums: int) -> TopicConfig:
    return replace(tc, read_queue_nums=nums, write_queue_nums=nums)
