"""StoreConfig: RocketMQ's ``MessageStoreConfig`` with its defaults (MessageStoreConfig.java).

``broker.conf`` is a Java properties file with camelCase keys; :func:`parse_properties`
reads that format (the broker reuses it) and :meth:`StoreConfig.from_broker_conf` maps the
store keys onto the snake_case fields. Unknown keys are returned and logged, never dropped
silently. Time is injectable (``clock_ms``) so tests move the clock instead of sleeping.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Any

from rocketq.common.clock import now_ms
from rocketq.common.java_properties import parse_properties as parse_properties
from rocketq.errors import ConfigError

log = logging.getLogger(__name__)

GIB = 1024 * 1024 * 1024
CQ_STORE_UNIT_SIZE = 20
DEFAULT_DELAY_LEVELS = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
_DELAY_UNITS_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


class FlushDiskType(Enum):
    ASYNC_FLUSH = "ASYNC_FLUSH"
    SYNC_FLUSH = "SYNC_FLUSH"


class BrokerRole(Enum):
    """MessageStoreConfig.brokerRole: who replicates to whom (store/ha/)."""

    ASYNC_MASTER = "ASYNC_MASTER"
    SYNC_MASTER = "SYNC_MASTER"
    SLAVE = "SLAVE"


@dataclass(frozen=True, kw_only=True)
class StoreConfig:
    store_path_root_dir: str = field(default_factory=lambda: str(Path.home() / "store"))
    store_path_commit_log: str = ""  # "" means <root>/commitlog
    mapped_file_size_commit_log: int = GIB
    mapped_file_size_consume_queue: int = 300_000 * CQ_STORE_UNIT_SIZE
    max_hash_slot_num: int = 5_000_000
    max_index_num: int = 20_000_000
    max_message_size: int = 4 * 1024 * 1024
    max_properties_size: int = 32_767
    flush_disk_type: FlushDiskType = FlushDiskType.ASYNC_FLUSH
    flush_interval_commit_log_ms: int = 500
    flush_commit_log_least_pages: int = 4
    flush_commit_log_thorough_interval_ms: int = 10_000
    flush_interval_consume_queue_ms: int = 1_000
    flush_consume_queue_least_pages: int = 2
    flush_consume_queue_thorough_interval_ms: int = 60_000
    #: rocketq's own: how often the dispatch checkpoint is written (store/dispatch_checkpoint.py)
    dispatch_checkpoint_interval_ms: int = 1_000
    sync_flush_timeout_ms: int = 5_000
    file_reserved_time_h: int = 72
    delete_when: str = "04"
    disk_max_used_space_ratio: int = 75
    delete_files_batch_max: int = 10
    clean_resource_interval_ms: int = 10_000
    check_crc_on_recover: bool = True
    message_index_enable: bool = True
    message_index_safe: bool = False
    message_delay_level: str = DEFAULT_DELAY_LEVELS
    max_transfer_bytes_on_message_in_memory: int = 256 * 1024
    max_transfer_count_on_message_in_memory: int = 32
    reput_fallback_wait_ms: int = 10
    # the commitlog's pages faulted in ahead of the writer, off the loop (store/warm.py):
    # rocketq's own window, and RocketMQ's whole-file warm-up (warmMapedFileEnable)
    commit_log_warm_ahead_bytes: int = 32 * 1024 * 1024  # 0: no warm-ahead
    commit_log_warm_populate_write: bool = True  # False: MADV_POPULATE_READ (no page dirtied)
    warm_mapped_file_enable: bool = False
    flush_least_pages_when_warm_mapped_file: int = 1024 // 4 * 16
    # replication (store/ha/): RocketMQ 4.x HAService / HAClient
    broker_role: BrokerRole = BrokerRole.ASYNC_MASTER
    ha_listen_port: int = 10912  # 0: any free port (tests)
    ha_listen_host: str = "0.0.0.0"
    ha_send_heartbeat_interval_ms: int = 5_000
    ha_housekeeping_interval_ms: int = 20_000
    ha_transfer_batch_size: int = 32 * 1024
    ha_slave_fallbehind_max: int = 256 * 1024 * 1024
    ha_master_address: str = ""  # host:port of the master's HA port; "" = from the name server
    # controller mode (store/ha/autoswitch_*): RocketMQ 5's AutoSwitchHAService; the broker
    # key enableControllerMode is read by the store too, as DefaultMessageStore does
    enable_controller_mode: bool = False
    all_ack_in_sync_state_set: bool = False
    in_sync_replicas: int = 1
    min_in_sync_replicas: int = 1
    ha_max_time_slave_not_catchup_ms: int = 15_000
    async_learner: bool = False
    sync_from_last_file: bool = False
    store_path_epoch_file: str = ""  # "" means <root>/epochFileCheckpoint
    access_message_in_memory_max_ratio: int = 40
    # CleanCommitLogService thresholds (5.x MessageStoreConfig; 4.x system properties)
    disk_space_warning_level_ratio: int = 90
    disk_space_clean_forcibly_ratio: int = 85
    # RocketMQ 5's timer wheel (store/timer/; MessageStoreConfig's timer* keys)
    timer_wheel_enable: bool = True
    timer_precision_ms: int = 1000  # snapped down to 100, 200, 500 or 1000
    timer_max_delay_sec: int = 3 * 24 * 3600
    timer_roll_window_slot: int = 2 * 24 * 3600
    mapped_file_size_timer_log: int = 100 * 1024 * 1024
    timer_flush_interval_ms: int = 1000
    timer_congest_num_each_slot: int = 2**31 - 1
    timer_stop_enqueue: bool = False
    timer_stop_dequeue: bool = False
    timer_enable_retry_until_success: bool = False
    store_host: tuple[str, int] = ("127.0.0.1", 10911)
    clock_ms: Callable[[], int] = field(default=now_ms, compare=False, repr=False)

    def __post_init__(self) -> None:
        positive = (
            "mapped_file_size_commit_log",
            "mapped_file_size_consume_queue",
            "max_hash_slot_num",
            "max_index_num",
            "max_message_size",
            "flush_interval_commit_log_ms",
            "sync_flush_timeout_ms",
            "clean_resource_interval_ms",
            "delete_files_batch_max",
            "ha_send_heartbeat_interval_ms",
            "ha_housekeeping_interval_ms",
            "ha_transfer_batch_size",
            "in_sync_replicas",
            "min_in_sync_replicas",
            "ha_max_time_slave_not_catchup_ms",
            "timer_max_delay_sec",
            "timer_flush_interval_ms",
            "timer_congest_num_each_slot",
            "flush_least_pages_when_warm_mapped_file",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.mapped_file_size_commit_log < 4096:
            raise ConfigError("mapped_file_size_commit_log must be at least 4096")
        if self.commit_log_warm_ahead_bytes < 0:
            raise ConfigError("commit_log_warm_ahead_bytes must be >= 0")
        if self.mapped_file_size_consume_queue % CQ_STORE_UNIT_SIZE:
            rounded = -(-self.mapped_file_size_consume_queue // CQ_STORE_UNIT_SIZE)
            object.__setattr__(self, "mapped_file_size_consume_queue", rounded * 20)
        if not 0 < self.max_properties_size <= 32_767:
            raise ConfigError("max_properties_size must be in 1..32767")
        if not re.fullmatch(r"\d{1,2}(;\d{1,2})*", self.delete_when):
            raise ConfigError(f"delete_when must be hours separated by ';': {self.delete_when!r}")
        ratio = min(95, max(10, self.disk_max_used_space_ratio))
        object.__setattr__(self, "disk_max_used_space_ratio", ratio)
        for name in ("disk_space_warning_level_ratio", "disk_space_clean_forcibly_ratio"):
            if not 10 <= getattr(self, name) <= 100:
                raise ConfigError(f"{name} must be in 10..100, got {getattr(self, name)}")
        self.delay_level_table_ms()  # validates
        precision = snap_timer_precision(self.timer_precision_ms)
        object.__setattr__(self, "timer_precision_ms", precision)
        if self.mapped_file_size_timer_log < 4096:
            raise ConfigError("mapped_file_size_timer_log must be at least 4096")

    # ------------------------------------------------------------------ derived values

    @property
    def commit_log_dir(self) -> str:
        return self.store_path_commit_log or os.path.join(self.store_path_root_dir, "commitlog")

    @property
    def epoch_file_path(self) -> str:
        return self.store_path_epoch_file or os.path.join(
            self.store_path_root_dir, "epochFileCheckpoint"
        )

    def delay_level_table_ms(self) -> dict[int, int]:
        table: dict[int, int] = {}
        for level, token in enumerate(self.message_delay_level.split(), start=1):
            m = re.fullmatch(r"(\d+)([smhd])", token)
            if m is None:
                raise ConfigError(f"bad message_delay_level token {token!r}")
            table[level] = int(m.group(1)) * _DELAY_UNITS_MS[m.group(2)]
        return table

    def replace(self, **changes: Any) -> StoreConfig:
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------ broker.conf

    @classmethod
    def from_properties(
        cls, props: Mapping[str, str], **overrides: Any
    ) -> tuple[StoreConfig, dict[str, str]]:
        """Build from camelCase properties; returns the config and the keys it did not know."""
        kwargs: dict[str, Any] = {}
        unknown: dict[str, str] = {}
        types = {f.name: f.type for f in fields(cls)}
        for key, raw in props.items():
            name = STORE_KEYS.get(key)
            if name is None:
                unknown[key] = raw
                continue
            kwargs[name] = _convert(key, raw, types[name])
        kwargs.update(overrides)
        return cls(**kwargs), unknown

    @classmethod
    def from_broker_conf(cls, path_or_text: str | os.PathLike[str]) -> StoreConfig:
        text = str(path_or_text)
        if "\n" not in text and ("=" not in text or os.path.exists(text)):
            text = Path(text).read_text(encoding="utf-8")
        config, unknown = cls.from_properties(parse_properties(text))
        for key in sorted(unknown):
            log.warning("broker.conf key %s is not a store key; ignored by the store", key)
        return config


STORE_KEYS: dict[str, str] = {
    "storePathRootDir": "store_path_root_dir",
    "storePathCommitLog": "store_path_commit_log",
    "mapedFileSizeCommitLog": "mapped_file_size_commit_log",
    "mappedFileSizeCommitLog": "mapped_file_size_commit_log",
    "mapedFileSizeConsumeQueue": "mapped_file_size_consume_queue",
    "mappedFileSizeConsumeQueue": "mapped_file_size_consume_queue",
    "maxHashSlotNum": "max_hash_slot_num",
    "maxIndexNum": "max_index_num",
    "maxMessageSize": "max_message_size",
    "flushDiskType": "flush_disk_type",
    "flushIntervalCommitLog": "flush_interval_commit_log_ms",
    "flushCommitLogLeastPages": "flush_commit_log_least_pages",
    "flushCommitLogThoroughInterval": "flush_commit_log_thorough_interval_ms",
    "flushIntervalConsumeQueue": "flush_interval_consume_queue_ms",
    "flushConsumeQueueLeastPages": "flush_consume_queue_least_pages",
    "flushConsumeQueueThoroughInterval": "flush_consume_queue_thorough_interval_ms",
    "syncFlushTimeout": "sync_flush_timeout_ms",
    "fileReservedTime": "file_reserved_time_h",
    "deleteWhen": "delete_when",
    "diskMaxUsedSpaceRatio": "disk_max_used_space_ratio",
    "cleanResourceInterval": "clean_resource_interval_ms",
    "checkCRCOnRecover": "check_crc_on_recover",
    "messageIndexEnable": "message_index_enable",
    "messageIndexSafe": "message_index_safe",
    "messageDelayLevel": "message_delay_level",
    "maxTransferBytesOnMessageInMemory": "max_transfer_bytes_on_message_in_memory",
    "maxTransferCountOnMessageInMemory": "max_transfer_count_on_message_in_memory",
    "commitLogWarmAheadBytes": "commit_log_warm_ahead_bytes",
    "commitLogWarmPopulateWrite": "commit_log_warm_populate_write",
    "warmMapedFileEnable": "warm_mapped_file_enable",
    "flushLeastPagesWhenWarmMapedFile": "flush_least_pages_when_warm_mapped_file",
    "brokerRole": "broker_role",
    "haListenPort": "ha_listen_port",
    "haSendHeartbeatInterval": "ha_send_heartbeat_interval_ms",
    "haHousekeepingInterval": "ha_housekeeping_interval_ms",
    "haTransferBatchSize": "ha_transfer_batch_size",
    "haSlaveFallbehindMax": "ha_slave_fallbehind_max",
    "haMasterAddress": "ha_master_address",
    "enableControllerMode": "enable_controller_mode",
    "allAckInSyncStateSet": "all_ack_in_sync_state_set",
    "inSyncReplicas": "in_sync_replicas",
    "minInSyncReplicas": "min_in_sync_replicas",
    "haMaxTimeSlaveNotCatchup": "ha_max_time_slave_not_catchup_ms",
    "asyncLearner": "async_learner",
    "syncFromLastFile": "sync_from_last_file",
    "storePathEpochFile": "store_path_epoch_file",
    "accessMessageInMemoryMaxRatio": "access_message_in_memory_max_ratio",
    "diskSpaceWarningLevelRatio": "disk_space_warning_level_ratio",
    "diskSpaceCleanForciblyRatio": "disk_space_clean_forcibly_ratio",
    "timerWheelEnable": "timer_wheel_enable",
    "timerPrecisionMs": "timer_precision_ms",
    "timerMaxDelaySec": "timer_max_delay_sec",
    "timerRollWindowSlot": "timer_roll_window_slot",
    "mappedFileSizeTimerLog": "mapped_file_size_timer_log",
    "timerFlushIntervalMs": "timer_flush_interval_ms",
    "timerCongestNumEachSlot": "timer_congest_num_each_slot",
    "timerStopEnqueue": "timer_stop_enqueue",
    "timerStopDequeue": "timer_stop_dequeue",
    "timerEnableRetryUntilSuccess": "timer_enable_retry_until_success",
}

TIMER_PRECISION_CANDIDATES_MS = (100, 200, 500, 1000)


def snap_timer_precision(precision_ms: int) -> int:
    """MessageStoreConfig.setTimerPrecisionMs: the largest candidate not above the value
    (100 below 100)."""
    snapped = TIMER_PRECISION_CANDIDATES_MS[0]
    for candidate in TIMER_PRECISION_CANDIDATES_MS:
        if precision_ms >= candidate:
            snapped = candidate
    return snapped


def _parse_bool(value: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise ValueError(value)
    return value.lower() == "true"


def _convert(key: str, raw: str, type_: Any) -> Any:
    value = raw.strip()
    type_name = type_ if isinstance(type_, str) else getattr(type_, "__name__", str(type_))
    try:
        if type_name == "int":
            return int(value)
        if type_name == "bool":
            return _parse_bool(value)
        if type_name == "FlushDiskType":
            return FlushDiskType(value)
        if type_name == "BrokerRole":
            return BrokerRole(value.upper())
    except ValueError as exc:
        raise ConfigError(f"broker.conf key {key}: bad value {raw!r}") from exc
    return value
