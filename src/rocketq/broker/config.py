"""BrokerConfig: the broker's settings with RocketMQ's defaults, loadable from ``broker.conf``.

``broker.conf`` is a Java properties file with camelCase keys. Broker keys map to the
snake_case fields below (plus a unit suffix where RocketMQ's name has none); the keys the
store knows (``rocketq.store.config.STORE_KEYS``: ``storePathCommitLog``,
``mapedFileSizeCommitLog``, ``flushDiskType``, ...) are kept verbatim in ``store_properties``
and handed to ``StoreConfig.from_properties``; the file is read with the store's
``parse_properties``. A key that neither side
knows is warned about by name, never silently dropped.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rocketq.common.topic import RMQ_SYS_TRACE_TOPIC
from rocketq.errors import ConfigError
from rocketq.store.config import STORE_KEYS as STORE_CONFIG_KEYS
from rocketq.store.config import BrokerRole as BrokerRole
from rocketq.store.config import parse_properties

log = logging.getLogger(__name__)


# camelCase key in broker.conf -> BrokerConfig field
BROKER_KEYS: dict[str, str] = {
    "listenPort": "listen_port",
    "brokerName": "broker_name",
    "brokerClusterName": "broker_cluster_name",
    "brokerId": "broker_id",
    "namesrvAddr": "namesrv_addr",
    "brokerIP1": "broker_ip1",
    "brokerIP2": "broker_ip2",
    "brokerRole": "broker_role",
    "autoCreateTopicEnable": "auto_create_topic_enable",
    "autoCreateSubscriptionGroup": "auto_create_subscription_group",
    "defaultTopicQueueNums": "default_topic_queue_nums",
    "brokerPermission": "broker_permission",
    "clusterTopicEnable": "cluster_topic_enable",
    "brokerTopicEnable": "broker_topic_enable",
    "traceTopicEnable": "trace_topic_enable",
    "msgTraceTopicName": "msg_trace_topic_name",
    "flushConsumerOffsetInterval": "flush_consumer_offset_interval_ms",
    "flushDelayOffsetInterval": "flush_delay_offset_interval_ms",
    "registerNameServerPeriod": "register_name_server_period_ms",
    # issue 22: the periodic registration in parts (RocketMQ 5's BrokerConfig)
    "enableSplitRegistration": "enable_split_registration",
    "splitRegistrationSize": "split_registration_size",
    "forceRegister": "force_register",
    "longPollingEnable": "long_polling_enable",
    "shortPollingTimeMills": "short_polling_time_ms",
    "notifyConsumerIdsChangedEnable": "notify_consumer_ids_changed_enable",
    "maxMessageSize": "max_message_size",
    "storePathRootDir": "store_path_root_dir",
    "slaveReadEnable": "slave_read_enable",
    # transactions (BrokerConfig.transaction*)
    "transactionCheckInterval": "transaction_check_interval_ms",
    "transactionTimeOut": "transaction_time_out_ms",
    "transactionCheckMax": "transaction_check_max",
    "rejectTransactionMessage": "reject_transaction_message",
    # rocketq's extension (broker/transaction_batch.py): halves sent and ended as one batch
    "transactionBatchEnable": "transaction_batch_enable",
    "storeReplyMessageEnable": "store_reply_message_enable",
    "aclEnable": "acl_enable",
    "metricsExporterType": "metrics_exporter_type",
    "metricsPromExporterHost": "metrics_prom_exporter_host",
    "metricsPromExporterPort": "metrics_prom_exporter_port",
    "enablePropertyFilter": "enable_property_filter",
    "enableMixedMessageType": "enable_mixed_message_type",
    # the file the broker was started from (-c): UPDATE_BROKER_CONFIG writes its changes there
    "brokerConfigPath": "broker_config_path",
    # controller mode (RocketMQ 5's BrokerConfig; broker/controller_mode/); enableControllerMode
    # is a store key too, and allAckInSyncStateSet, inSyncReplicas, minInSyncReplicas,
    # haMaxTimeSlaveNotCatchup, asyncLearner are the store's own
    "enableControllerMode": "enable_controller_mode",
    "controllerAddr": "controller_addr",
    "brokerHeartbeatInterval": "broker_heartbeat_interval_ms",
    "controllerHeartBeatTimeoutMills": "controller_heart_beat_timeout_ms",
    "sendHeartbeatTimeoutMillis": "send_heartbeat_timeout_ms",
    "brokerElectionPriority": "broker_election_priority",
    "syncBrokerMetadataPeriod": "sync_broker_metadata_period_ms",
    "checkSyncStateSetPeriod": "check_sync_state_set_period_ms",
    "syncControllerMetadataPeriod": "sync_controller_metadata_period_ms",
    "storePathBrokerIdentity": "store_path_broker_identity",
    # POP consumption (BrokerConfig's pop keys; broker/pop/)
    "reviveQueueNum": "revive_queue_num",
    "reviveInterval": "revive_interval_ms",
    "reviveAckWaitMs": "revive_ack_wait_ms",
    "popPollingSize": "pop_polling_size",
    "popPollingMapSize": "pop_polling_map_size",
    "enableRetryTopicV2": "enable_retry_topic_v2",
    "popFromRetryProbability": "pop_from_retry_probability",
    "initPopOffsetByCheckMsgInMem": "init_pop_offset_by_check_msg_in_mem",
}

# keys that belong to the store (MessageStoreConfig): passed through to StoreConfig
STORE_KEYS: frozenset[str] = frozenset(STORE_CONFIG_KEYS)

_INT = re.compile(r"^-?\d+$")


@dataclass(frozen=True, kw_only=True, slots=True)
class BrokerConfig:
    listen_host: str = "0.0.0.0"
    listen_port: int = 10911
    broker_name: str = "broker-a"
    broker_cluster_name: str = "DefaultCluster"
    broker_id: int = 0
    namesrv_addr: str | None = None
    broker_ip1: str = "127.0.0.1"
    broker_ip2: str | None = None
    broker_role: BrokerRole = BrokerRole.ASYNC_MASTER
    broker_permission: int = 6
    auto_create_topic_enable: bool = True
    auto_create_subscription_group: bool = True
    default_topic_queue_nums: int = 8
    cluster_topic_enable: bool = True
    broker_topic_enable: bool = True
    trace_topic_enable: bool = False
    msg_trace_topic_name: str = RMQ_SYS_TRACE_TOPIC
    flush_consumer_offset_interval_ms: int = 5_000
    flush_delay_offset_interval_ms: int = 10_000
    register_name_server_period_ms: int = 30_000
    enable_split_registration: bool = False
    split_registration_size: int = 800
    # BrokerConfig.forceRegister. RocketMQ's default (true) sends the whole table every
    # registerNameServerPeriod; rocketq's (false) sends it only to a name server whose
    # DataVersion of the broker differs (needRegister), as every create already registered
    # its increment: at 100,000 topics the full table (15 MB) kept a name server busy for
    # seconds each period, and creates registering meanwhile waited behind it
    force_register: bool = False
    # ClientHousekeepingService: a client channel silent this long is dropped
    channel_expired_timeout_ms: int = 120_000
    # RebalanceLockManager.REBALANCE_LOCK_MAX_LIVE_TIME
    rebalance_lock_max_live_time_ms: int = 60_000
    long_polling_enable: bool = True
    short_polling_time_ms: int = 1_000
    # PullRequestHoldService re-checks held requests at least this often
    pull_request_hold_check_interval_ms: int = 5_000
    notify_consumer_ids_changed_enable: bool = True
    max_message_size: int = 4 * 1024 * 1024
    # ReplyMessageProcessor also stores each reply in <cluster>_REPLY_TOPIC
    store_reply_message_enable: bool = True
    store_path_root_dir: str = str(Path.home() / "store")
    # replication (broker/slave_sync.py, store/ha/); brokerRole is also a store key
    slave_read_enable: bool = False
    slave_sync_interval_ms: int = 10_000
    # TransactionalMessageCheckService: scan period, age before a half is checked, check count
    transaction_check_interval_ms: int = 60_000
    transaction_time_out_ms: int = 6_000
    transaction_check_max: int = 15
    reject_transaction_message: bool = False
    transaction_batch_enable: bool = True
    # plain ACL: plain_acl.yml in <store>/config/ (or $ROCKETMQ_HOME/conf/), polled for changes
    acl_enable: bool = False
    acl_file_path: str | None = None
    acl_watch_interval_ms: int = 500
    # RocketMQ 5's metrics: PROM serves /metrics on metricsPromExporterHost (default brokerIP1)
    # and metricsPromExporterPort; DISABLE (the default) serves nothing
    metrics_exporter_type: str = "DISABLE"
    metrics_prom_exporter_host: str = ""
    metrics_prom_exporter_port: int = 5557
    # SQL92 subscriptions (property filters); off, as in RocketMQ, refuses them
    enable_property_filter: bool = False
    # RocketMQ 5: updateTopic refuses message.type=MIXED unless this is on
    enable_mixed_message_type: bool = False
    # controller mode: the controllers (';'-separated), heartbeats to each, role polls
    enable_controller_mode: bool = False
    controller_addr: str = ""
    broker_heartbeat_interval_ms: int = 1_000
    controller_heart_beat_timeout_ms: int = 10_000
    send_heartbeat_timeout_ms: int = 1_000
    broker_election_priority: int = (1 << 31) - 1
    sync_broker_metadata_period_ms: int = 5_000
    check_sync_state_set_period_ms: int = 5_000
    sync_controller_metadata_period_ms: int = 10_000
    store_path_broker_identity: str = ""  # "" means <storePathRootDir>/brokerIdentity
    # POP (BrokerConfig): revive queues of rmq_sys_REVIVE_LOG_<cluster>, the revive scan period,
    # how long an ack read without its checkpoint waits for it, held pops per queue and queues
    # with held pops, the POP retry topic's name (V2: '+'), the share of pops that try the
    # retry topic first (percent), a new group's first offset rule (grpc spec 9.2)
    revive_queue_num: int = 8
    revive_interval_ms: int = 1_000
    revive_ack_wait_ms: int = 180_000
    pop_polling_size: int = 1024
    pop_polling_map_size: int = 100_000
    enable_retry_topic_v2: bool = False
    pop_from_retry_probability: int = 20
    init_pop_offset_by_check_msg_in_mem: bool = True
    # store keys from broker.conf, verbatim (camelCase -> text), for the StoreConfig loader
    broker_config_path: str | None = None
    store_properties: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0 <= self.listen_port <= 65535:
            raise ConfigError(f"listen_port out of range: {self.listen_port}")
        if self.broker_id < 0 and not self.enable_controller_mode:  # the controller assigns it
            raise ConfigError(f"broker_id must be >= 0: {self.broker_id}")
        if not 0 < self.default_topic_queue_nums <= 1024:
            raise ConfigError(
                f"default_topic_queue_nums out of range: {self.default_topic_queue_nums}"
            )
        if not self.broker_name:
            raise ConfigError("broker_name must not be empty")
        for name in (
            "flush_consumer_offset_interval_ms",
            "register_name_server_period_ms",
            "split_registration_size",
            "channel_expired_timeout_ms",
            "max_message_size",
            "transaction_check_interval_ms",
            "transaction_check_max",
            "acl_watch_interval_ms",
            "broker_heartbeat_interval_ms",
            "controller_heart_beat_timeout_ms",
            "send_heartbeat_timeout_ms",
            "sync_broker_metadata_period_ms",
            "check_sync_state_set_period_ms",
            "sync_controller_metadata_period_ms",
            "revive_queue_num",
            "revive_interval_ms",
            "pop_polling_size",
            "pop_polling_map_size",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")
        if self.enable_controller_mode and not self.controller_addr_list:
            raise ConfigError("enableControllerMode=true needs controllerAddr (host:port;...)")

        if not 0 <= self.pop_from_retry_probability <= 100:
            raise ConfigError("pop_from_retry_probability must be within 0..100")
        if self.revive_ack_wait_ms < 0:
            raise ConfigError("revive_ack_wait_ms must not be negative")

    @property
    def broker_addr(self) -> str:
        return f"{self.broker_ip1}:{self.listen_port}"

    @property
    def namesrv_addr_list(self) -> list[str]:
        return [a.strip() for a in (self.namesrv_addr or "").split(";") if a.strip()]

    @property
    def controller_addr_list(self) -> list[str]:
        return [a.strip() for a in self.controller_addr.split(";") if a.strip()]

    @property
    def broker_identity_path(self) -> str:
        """MessageStoreConfig.getStorePathBrokerIdentity."""
        return self.store_path_broker_identity or os.path.join(
            self.store_path_root_dir, "brokerIdentity"
        )

    @classmethod
    def from_properties(cls, props: dict[str, str], **overrides: Any) -> BrokerConfig:
        """Build from broker.conf properties; unknown keys are warned about by name."""
        types = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}
        store: dict[str, str] = {}
        for key, text in props.items():
            if key in STORE_KEYS:
                store[key] = text
            if key in BROKER_KEYS:
                name = BROKER_KEYS[key]
                values[name] = _convert(key, text, str(types[name]))
            elif key not in STORE_KEYS:
                log.warning("broker.conf: unknown key %r ignored", key)
        values["store_properties"] = store
        values.update(overrides)
        return cls(**values)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **overrides: Any) -> BrokerConfig:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from exc
        props = parse_properties(text)
        if "brokerConfigPath" not in props:
            overrides.setdefault("broker_config_path", str(path))
        return cls.from_properties(props, **overrides)


def _convert(key: str, text: str, type_name: str) -> Any:
    text = text.strip()
    if "BrokerRole" in type_name:
        try:
            return BrokerRole(text.upper())
        except ValueError:
            raise ConfigError(f"{key}: unknown broker role {text!r}") from None
    if type_name == "bool":
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"{key}: expected true or false, got {text!r}")
        return text.lower() == "true"
    if type_name == "int":
        if not _INT.match(text):
            raise ConfigError(f"{key}: expected an integer, got {text!r}")
        return int(text)
    return os.path.expanduser(text) if key == "storePathRootDir" else text
