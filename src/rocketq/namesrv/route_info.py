"""RouteInfoManager: the name server's state, no IO (RocketMQ's RouteInfoManager, 4.9.8).

Tables::

    topic_queue_table    topic       -> {brokerName: QueueData}
    broker_addr_table    brokerName  -> BrokerData (cluster, {brokerId: addr})
    cluster_addr_table   clusterName -> {brokerName}
    broker_live_table    brokerAddr  -> BrokerLiveInfo (last update, DataVersion, channel, haAddr)
    filter_server_table  brokerAddr  -> [filter server addr]

Only a master (id 0) writes queue data, and only when its DataVersion changed or it registers
for the first time, or for a topic it has no queue data for yet (RocketMQ 5's
``isTopicConfigChanged``: the later parts of a split registration). An incremental registration
(a topic create: rocketq's broker names the version it chains on) whose base is not the
version held here leaves the broker's version unknown, so the broker's periodic
QUERY_DATA_VERSION finds it behind and sends the whole table; a later part of a split table
names its own version as its base and leaves the version held as it is. The work of a registration
is in proportion to the topics in its body (a create registers only the new topic). When two
brokers claim one id (a new controller-mode master and a stale one, both as 0), the claim with
the lower ``DataVersion.stateVersion`` (the master epoch) is ignored (RocketMQ 5, PR #6317). A
broker whose live entry is older than the expiry is dropped together with its routes; so is a
broker whose connection closes. Time comes from an injectable ``clock`` (ms) so tests can
expire brokers without waiting.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from rocketq.common.clock import now_ms
from rocketq.common.heap_freeze import HEAP
from rocketq.common.topic_config import PERM_WRITE, TopicConfig
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.topic_route import (
    MASTER_ID,
    BrokerData,
    ClusterInfo,
    QueueData,
    TopicRouteData,
)

log = logging.getLogger(__name__)

FLAG_UNIT = 0x1
FLAG_UNIT_SUB = 0x2


@dataclass(slots=True)
class BrokerLiveInfo:
    last_update_timestamp: int
    data_version: DataVersion
    channel: object | None
    ha_server_addr: str


@dataclass(frozen=True, slots=True)
class RegisterBrokerResult:
    ha_server_addr: str | None = None
    master_addr: str | None = None


def unknown_version(sent: DataVersion) -> DataVersion:
    """What the name server records for an incremental registration whose base is not the
    version it holds (it restarted, expired the broker or missed an increment): a version no
    broker sends, so QUERY_DATA_VERSION answers "changed" and the broker's next periodic round
    sends the whole table (``BrokerController.registerBrokerAll`` with ``needRegister``). The
    stateVersion (a controller-mode master's epoch) is kept for the id-0 claims."""
    return DataVersion(timestamp=0, counter=-1, state_version=sent.state_version)


class RouteInfoManager:
    def __init__(
        self,
        *,
        broker_channel_expired_time_ms: int = 120_000,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.broker_channel_expired_time_ms = broker_channel_expired_time_ms
        self._clock = clock
        self._lock = threading.RLock()
        self.topic_queue_table: dict[str, dict[str, QueueData]] = {}
        self.broker_addr_table: dict[str, BrokerData] = {}
        self.cluster_addr_table: dict[str, set[str]] = {}
        self.broker_live_table: dict[str, BrokerLiveInfo] = {}
        self.filter_server_table: dict[str, list[str]] = {}

    # ------------------------------------------------------------------ registration

    def register_broker(
        self,
        *,
        cluster_name: str,
        broker_addr: str,
        broker_name: str,
        broker_id: int,
        ha_server_addr: str,
        topic_config_table: dict[str, TopicConfig] | None,
        data_version: DataVersion,
        filter_server_list: list[str] | None = None,
        channel: object | None = None,
        base_version: DataVersion | None = None,
    ) -> RegisterBrokerResult:
        """``_register``; then, outside the lock, the route table frozen if it grew by a step
        (``rocketq.common.heap_freeze``)."""
        try:
            return self._register(
                cluster_name,
                broker_addr,
                broker_name,
                broker_id,
                ha_server_addr,
                topic_config_table,
                data_version,
                filter_server_list,
                channel,
                base_version,
            )
        finally:
            HEAP.settle()

    def _register(
        self,
        cluster_name: str,
        broker_addr: str,
        broker_name: str,
        broker_id: int,
        ha_server_addr: str,
        topic_config_table: dict[str, TopicConfig] | None,
        data_version: DataVersion,
        filter_server_list: list[str] | None,
        channel: object | None,
        base_version: DataVersion | None,
    ) -> RegisterBrokerResult:
        """``base_version`` marks an incremental registration (rocketq's base, see
        ``unknown_version``); equal to ``data_version``, a later part of a split table (its
        new topics taken, the version held left as it is); None: the broker's whole table
        (or its first part)."""
        with self._lock:
            self.cluster_addr_table.setdefault(cluster_name, set()).add(broker_name)
            broker_data = self.broker_addr_table.get(broker_name)
            register_first = broker_data is None
            if broker_data is None:
                broker_data = BrokerData(cluster=cluster_name, broker_name=broker_name)
                self.broker_addr_table[broker_name] = broker_data
            addrs = broker_data.broker_addrs
            for other_id in [i for i, a in addrs.items() if a == broker_addr and i != broker_id]:
                del addrs[other_id]
            old_addr = addrs.get(broker_id)
            if self._stale_claim(old_addr, broker_addr, data_version):
                log.warning(
                    "%s/%s id %d: %s (stateVersion %d) is older than %s; registration ignored",
                    cluster_name,
                    broker_name,
                    broker_id,
                    broker_addr,
                    data_version.state_version_or_zero,
                    old_addr,
                )
                self.broker_live_table.pop(broker_addr, None)
                return RegisterBrokerResult()
            addrs[broker_id] = broker_addr
            register_first = register_first or old_addr is None
            continuation = base_version is not None and base_version == data_version
            changed = not continuation and (
                register_first or self.is_broker_topic_config_changed(broker_addr, data_version)
            )
            made = 0  # long-lived QueueData, frozen after a growth step (heap_freeze)
            if topic_config_table is not None and broker_id == MASTER_ID:
                for config in topic_config_table.values():
                    if changed or self._is_new_topic_of(broker_name, config.topic_name):
                        self._create_and_update_queue_data(broker_name, config)
                        made += 1
            HEAP.grown(made)
            held = self.broker_live_table.get(broker_addr)
            if continuation and held is not None:
                data_version = held.data_version  # a later part of a split table: as it was
            elif base_version is not None and (held is None or held.data_version != base_version):
                data_version = unknown_version(data_version)  # an increment we cannot chain
            self.broker_live_table[broker_addr] = BrokerLiveInfo(
                self._clock(), data_version, channel, ha_server_addr
            )
            if filter_server_list is not None:
                if filter_server_list:
                    self.filter_server_table[broker_addr] = list(filter_server_list)
                else:
                    self.filter_server_table.pop(broker_addr, None)
            if broker_id != MASTER_ID:
                master_addr = addrs.get(MASTER_ID)
                master_live = self.broker_live_table.get(master_addr) if master_addr else None
                if master_addr is not None and master_live is not None:
                    return RegisterBrokerResult(master_live.ha_server_addr, master_addr)
            return RegisterBrokerResult()

    def _stale_claim(self, old_addr: str | None, broker_addr: str, version: DataVersion) -> bool:
        """RocketMQ 5's RouteInfoManager.registerBroker: when another live broker holds this id
        with a higher stateVersion (a controller-mode master's epoch), the claim loses."""
        if old_addr is None or old_addr == broker_addr:
            return False
        old_live = self.broker_live_table.get(old_addr)
        if old_live is None:
            return False
        return old_live.data_version.state_version_or_zero > version.state_version_or_zero

    def _create_and_update_queue_data(self, broker_name: str, config: TopicConfig) -> None:
        queue_data = QueueData(
            broker_name=broker_name,
            read_queue_nums=config.read_queue_nums,
            write_queue_nums=config.write_queue_nums,
            perm=config.perm,
            topic_sys_flag=config.topic_sys_flag,
        )
        self.topic_queue_table.setdefault(config.topic_name, {})[broker_name] = queue_data

    def _is_new_topic_of(self, broker_name: str, topic: str) -> bool:
        """RocketMQ 5's isTopicConfigChanged beyond the version: a topic this broker has no
        queue data for yet is taken even when the version was seen (a later part of a split
        registration, or an incremental one overtaken by the periodic one)."""
        queue_datas = self.topic_queue_table.get(topic)
        return not queue_datas or broker_name not in queue_datas

    def is_broker_topic_config_changed(self, broker_addr: str, data_version: DataVersion) -> bool:
        with self._lock:
            live = self.broker_live_table.get(broker_addr)
            return live is None or live.data_version != data_version

    def query_broker_topic_config(self, broker_addr: str) -> DataVersion | None:
        with self._lock:
            live = self.broker_live_table.get(broker_addr)
            return live.data_version if live is not None else None

    def update_broker_info_update_timestamp(self, broker_addr: str) -> None:
        with self._lock:
            live = self.broker_live_table.get(broker_addr)
            if live is not None:
                live.last_update_timestamp = self._clock()

    def unregister_broker(
        self, *, cluster_name: str, broker_addr: str, broker_name: str, broker_id: int
    ) -> None:
        with self._lock:
            self.broker_live_table.pop(broker_addr, None)
            self.filter_server_table.pop(broker_addr, None)
            broker_data = self.broker_addr_table.get(broker_name)
            remove_broker_name = False
            if broker_data is not None:
                # by address, as RocketMQ 5's RouteInfoManager#unRegisterBroker: a stale broker
                # leaving under the id a new master now holds must not take that entry away
                for held_id in [i for i, a in broker_data.broker_addrs.items() if a == broker_addr]:
                    del broker_data.broker_addrs[held_id]
                if not broker_data.broker_addrs:
                    del self.broker_addr_table[broker_name]
                    remove_broker_name = True
            if remove_broker_name:
                names = self.cluster_addr_table.get(cluster_name)
                if names is not None:
                    names.discard(broker_name)
                    if not names:
                        del self.cluster_addr_table[cluster_name]
                self._remove_topic_by_broker_name(broker_name)

    # ------------------------------------------------------------------ expiry

    def scan_not_active_broker(self) -> list[BrokerLiveInfo]:
        """Drop brokers silent for longer than the expiry; return them (to close channels)."""
        with self._lock:
            now = self._clock()
            expired = [
                (addr, live)
                for addr, live in self.broker_live_table.items()
                if live.last_update_timestamp + self.broker_channel_expired_time_ms < now
            ]
            for addr, _ in expired:
                del self.broker_live_table[addr]
                self._on_broker_gone(addr)
            return [live for _, live in expired]

    def on_channel_destroy(self, remote_addr: str, channel: object | None) -> str | None:
        """A connection closed: drop the broker registered through it (found by channel)."""
        with self._lock:
            broker_addr = None
            if channel is not None:
                for addr, live in self.broker_live_table.items():
                    if live.channel is channel:
                        broker_addr = addr
                        break
            if broker_addr is None and remote_addr in self.broker_live_table:
                broker_addr = remote_addr
            if broker_addr is None:
                return None
            self.broker_live_table.pop(broker_addr, None)
            self._on_broker_gone(broker_addr)
            return broker_addr

    def _on_broker_gone(self, broker_addr: str) -> None:
        self.filter_server_table.pop(broker_addr, None)
        removed_names: list[str] = []
        for name, data in list(self.broker_addr_table.items()):
            for broker_id in [i for i, a in data.broker_addrs.items() if a == broker_addr]:
                del data.broker_addrs[broker_id]
            if not data.broker_addrs:
                del self.broker_addr_table[name]
                removed_names.append(name)
        for name in removed_names:
            for cluster, names in list(self.cluster_addr_table.items()):
                names.discard(name)
                if not names:
                    del self.cluster_addr_table[cluster]
            self._remove_topic_by_broker_name(name)

    def _remove_topic_by_broker_name(self, broker_name: str) -> None:
        for topic, queue_datas in list(self.topic_queue_table.items()):
            queue_datas.pop(broker_name, None)
            if not queue_datas:
                del self.topic_queue_table[topic]

    # ------------------------------------------------------------------ queries

    def pickup_topic_route_data(self, topic: str) -> TopicRouteData | None:
        with self._lock:
            queue_datas = self.topic_queue_table.get(topic)
            if not queue_datas:
                return None
            route = TopicRouteData(queue_datas=[_copy_queue_data(q) for q in queue_datas.values()])
            for name in queue_datas:
                data = self.broker_addr_table.get(name)
                if data is None:
                    continue
                route.broker_datas.append(
                    BrokerData(
                        cluster=data.cluster, broker_name=name, broker_addrs=dict(data.broker_addrs)
                    )
                )
                for addr in data.broker_addrs.values():
                    servers = self.filter_server_table.get(addr)
                    if servers:
                        route.filter_server_table[addr] = list(servers)
            return route if route.broker_datas else None

    def get_all_cluster_info(self) -> ClusterInfo:
        with self._lock:
            return ClusterInfo(
                broker_addr_table={
                    n: BrokerData(
                        cluster=d.cluster, broker_name=n, broker_addrs=dict(d.broker_addrs)
                    )
                    for n, d in self.broker_addr_table.items()
                },
                cluster_addr_table={c: set(n) for c, n in self.cluster_addr_table.items()},
            )

    def get_all_topic_list(self) -> set[str]:
        with self._lock:
            return set(self.topic_queue_table)

    def get_topics_by_cluster(self, cluster: str) -> set[str]:
        with self._lock:
            names = self.cluster_addr_table.get(cluster, set())
            return {t for t, qds in self.topic_queue_table.items() if names & qds.keys()}

    def get_system_topic_list(self) -> tuple[set[str], str | None]:
        """Cluster and broker names (RocketMQ's system topics) and one broker address."""
        with self._lock:
            topics: set[str] = set()
            for cluster, names in self.cluster_addr_table.items():
                topics.add(cluster)
                topics.update(names)
            addr = next(
                (
                    next(iter(d.broker_addrs.values()))
                    for d in self.broker_addr_table.values()
                    if d.broker_addrs
                ),
                None,
            )
            return topics, addr

    def get_topics_by_sys_flag(self, predicate: Callable[[int], bool]) -> set[str]:
        with self._lock:
            return {
                t
                for t, qds in self.topic_queue_table.items()
                if qds and predicate(next(iter(qds.values())).topic_sys_flag)
            }

    def delete_topic(self, topic: str) -> None:
        with self._lock:
            self.topic_queue_table.pop(topic, None)

    def wipe_write_perm_of_broker(self, broker_name: str) -> int:
        return self._update_write_perm(broker_name, wipe=True)

    def add_write_perm_of_broker(self, broker_name: str) -> int:
        return self._update_write_perm(broker_name, wipe=False)

    def _update_write_perm(self, broker_name: str, *, wipe: bool) -> int:
        with self._lock:
            count = 0
            for queue_datas in self.topic_queue_table.values():
                queue_data = queue_datas.get(broker_name)
                if queue_data is not None:
                    if wipe:
                        queue_data.perm &= ~PERM_WRITE
                    else:
                        queue_data.perm |= PERM_WRITE
                    count += 1
            return count


def _copy_queue_data(q: QueueData) -> QueueData:
    return QueueData(
        broker_name=q.broker_name,
        read_queue_nums=q.read_queue_nums,
        write_queue_nums=q.write_queue_nums,
        perm=q.perm,
        topic_sys_flag=q.topic_sys_flag,
    )
