"""The controller's metrics, RocketMQ 5's ``ControllerMetricsManager`` names, for ``/metrics``.

``ControllerMetrics`` keeps what only the request path knows (requests answered by type and
status with their latency, elections by result); ``ControllerMetricsCollector`` reads those and
the controller's own state at scrape time (prometheus_client's custom-collector pattern):

=================================  =========  ==================================================
series                             kind       labels (plus address, group, peer_id on each)
=================================  =========  ==================================================
rocketmq_role                      gauge      - (0 unknown, 1 candidate, 2 follower, 3 leader)
rocketmq_active_broker_num         gauge      cluster, broker_set
rocketmq_request_total             counter    request_type, request_handle_status
rocketmq_request_latency           histogram  request_type (microseconds, RocketMQ's buckets)
rocketmq_election_total            counter    cluster, broker_set, election_result
rocketmq_sync_state_set_size       gauge      cluster, broker_set (rocketq's: in-sync replicas)
=================================  =========  ==================================================

The histogram's buckets and the microsecond unit are ``ControllerMetricsManager
.registerMetricsView``'s; request types are ``ControllerMetricsConstant.RequestType`` names.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from enum import Enum
from typing import TypeVar

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from rocketq.controller.heartbeat import BrokerHeartbeatManager
from rocketq.controller.raft import Role
from rocketq.controller.replicas_info import ControllerStateMachine
from rocketq.controller.server import ControllerServer
from rocketq.remoting.protocol.codes import RequestCode

T = TypeVar("T")

#: ControllerMetricsManager's latency view (1 us .. 10 s), in microseconds
REQUEST_LATENCY_BUCKETS_US: tuple[int, ...] = (
    *(1, 3, 5, 10, 30, 50, 100, 300, 500),
    *(1_000, 3_000, 5_000, 10_000, 30_000, 50_000, 100_000, 300_000, 500_000),
    *(1_000_000, 3_000_000, 5_000_000, 10_000_000),
)

#: ControllerMetricsConstant.RequestType: request code -> its name
REQUEST_TYPES: dict[int, str] = {
    RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET: "CONTROLLER_ALTER_SYNC_STATE_SET",
    RequestCode.CONTROLLER_ELECT_MASTER: "CONTROLLER_ELECT_MASTER",
    RequestCode.CONTROLLER_REGISTER_BROKER: "CONTROLLER_REGISTER_BROKER",
    RequestCode.CONTROLLER_GET_REPLICA_INFO: "CONTROLLER_GET_REPLICA_INFO",
    RequestCode.CONTROLLER_GET_METADATA_INFO: "CONTROLLER_GET_METADATA_INFO",
    RequestCode.CONTROLLER_GET_SYNC_STATE_DATA: "CONTROLLER_GET_SYNC_STATE_DATA",
    RequestCode.GET_BROKER_EPOCH_CACHE: "CONTROLLER_GET_BROKER_EPOCH_CACHE",
    RequestCode.NOTIFY_BROKER_ROLE_CHANGED: "CONTROLLER_NOTIFY_BROKER_ROLE_CHANGED",
    RequestCode.BROKER_HEARTBEAT: "CONTROLLER_BROKER_HEARTBEAT",
    RequestCode.UPDATE_CONTROLLER_CONFIG: "CONTROLLER_UPDATE_CONTROLLER_CONFIG",
    RequestCode.GET_CONTROLLER_CONFIG: "CONTROLLER_GET_CONTROLLER_CONFIG",
    RequestCode.CLEAN_BROKER_DATA: "CONTROLLER_CLEAN_BROKER_DATA",
    RequestCode.CONTROLLER_GET_NEXT_BROKER_ID: "CONTROLLER_GET_NEXT_BROKER_ID",
    RequestCode.CONTROLLER_APPLY_BROKER_ID: "CONTROLLER_APPLY_BROKER_ID",
}

#: ControllerMetricsManager.getRoleValue (DLedger's MemberState.Role)
ROLE_VALUES = {Role.PRE_CANDIDATE: 1, Role.CANDIDATE: 1, Role.FOLLOWER: 2, Role.LEADER: 3}


class RequestHandleStatus(Enum):
    SUCCESS = "success"
    FAILED = "failed"
    TIMEOUT = "timeout"


class ElectionResult(Enum):
    NEW_MASTER_ELECTED = "new_master_elected"
    KEEP_CURRENT_MASTER = "keep_current_master"
    NO_MASTER_ELECTED = "no_master_elected"


class ControllerMetrics:
    """The counters of the request path; thread-safe (the scrape runs on another thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, str], int] = {}
        self.latency: dict[str, list[int]] = {}  # bucket counts, +Inf last
        self.latency_sum_us: dict[str, int] = {}
        self.elections: dict[tuple[str, str, str], int] = {}

    def on_request(self, code: int, status: RequestHandleStatus, elapsed_us: int) -> None:
        request_type = REQUEST_TYPES.get(code, str(code))
        with self._lock:
            key = (request_type, status.value)
            self.requests[key] = self.requests.get(key, 0) + 1
            if status is not RequestHandleStatus.SUCCESS:
                return  # RocketMQ records latency for answered requests only
            counts = self.latency.setdefault(
                request_type, [0] * (len(REQUEST_LATENCY_BUCKETS_US) + 1)
            )
            index = next(
                (i for i, bound in enumerate(REQUEST_LATENCY_BUCKETS_US) if elapsed_us <= bound),
                len(REQUEST_LATENCY_BUCKETS_US),
            )
            counts[index] += 1
            self.latency_sum_us[request_type] = (
                self.latency_sum_us.get(request_type, 0) + elapsed_us
            )

    def on_election(self, cluster: str, broker_set: str, result: ElectionResult) -> None:
        with self._lock:
            key = (cluster, broker_set, result.value)
            self.elections[key] = self.elections.get(key, 0) + 1

    def snapshot(
        self,
    ) -> tuple[
        dict[tuple[str, str], int],
        dict[str, list[int]],
        dict[str, int],
        dict[tuple[str, str, str], int],
    ]:
        with self._lock:
            latency = {k: list(v) for k, v in self.latency.items()}
            return dict(self.requests), latency, dict(self.latency_sum_us), dict(self.elections)


#: what the collector reads of the controller, each a callable run at scrape time
RoleReader = Callable[[], Role | None]
CountsReader = Callable[[], dict[str, dict[str, int]]]


class ControllerMetricsCollector(Collector):
    def __init__(
        self,
        labels: tuple[str, str, str],
        metrics: ControllerMetrics,
        *,
        role: RoleReader,
        active_brokers: CountsReader,
        sync_state_set_sizes: CountsReader,
    ) -> None:
        """``labels``: (address, group, peer_id) as ControllerMetricsManager's LABEL_MAP."""
        self.labels = labels
        self.metrics = metrics
        self._role = role
        self._active_brokers = active_brokers
        self._sync_state_set_sizes = sync_state_set_sizes

    @classmethod
    def of_controller(
        cls,
        server: ControllerServer,
        heartbeats: BrokerHeartbeatManager,
        state_machine: ControllerStateMachine,
        metrics: ControllerMetrics,
        clock: Callable[[], int],
    ) -> ControllerMetricsCollector:
        """The collector of one controller: its Raft role, liveness table and broker sets."""

        def sync_state_set_sizes() -> dict[str, dict[str, int]]:
            sizes: dict[str, dict[str, int]] = {}
            for bs in list(state_machine.replicas_info.broker_sets.values()):
                sizes.setdefault(bs.cluster_name, {})[bs.broker_name] = len(bs.sync_state_set)
            return sizes

        node = server.raft_node
        return cls(
            (server.addr, server.group, server.self_id),
            metrics,
            role=lambda: None if node.halted else node.role,
            active_brokers=lambda: _retrying(lambda: heartbeats.get_active_brokers_num(clock())),
            sync_state_set_sizes=lambda: _retrying(sync_state_set_sizes),
        )

    def collect(self) -> Iterator[Metric]:
        base = ("address", "group", "peer_id")
        node = list(self.labels)
        role = GaugeMetricFamily("rocketmq_role", "role of current node", labels=base)
        current = self._role()
        role.add_metric(node, 0 if current is None else ROLE_VALUES[current])
        yield role
        yield self._per_broker_set(
            "rocketmq_active_broker_num", "now active brokers num", self._active_brokers()
        )
        yield self._per_broker_set(
            "rocketmq_sync_state_set_size",
            "replicas in the SyncStateSet of each broker set",
            self._sync_state_set_sizes(),
        )
        requests, latency, latency_sum, elections = self.metrics.snapshot()
        total = CounterMetricFamily(
            "rocketmq_request",
            "total request num",
            labels=(*base, "request_type", "request_handle_status"),
        )
        for (request_type, status), count in sorted(requests.items()):
            total.add_metric([*node, request_type, status], count)
        yield total
        histogram = HistogramMetricFamily(
            "rocketmq_request_latency", "request latency", labels=(*base, "request_type")
        )
        for request_type, counts in sorted(latency.items()):
            histogram.add_metric(
                [*node, request_type],
                buckets=_cumulative(counts),
                sum_value=latency_sum[request_type],
            )
        yield histogram
        election = CounterMetricFamily(
            "rocketmq_election",
            "total elect num",
            labels=(*base, "cluster", "broker_set", "election_result"),
        )
        for (cluster, broker_set, result), count in sorted(elections.items()):
            election.add_metric([*node, cluster, broker_set, result], count)
        yield election

    def _per_broker_set(self, name: str, doc: str, counts: dict[str, dict[str, int]]) -> Metric:
        family = GaugeMetricFamily(
            name, doc, labels=("address", "group", "peer_id", "cluster", "broker_set")
        )
        for cluster, per_set in sorted(counts.items()):
            for broker_set, count in sorted(per_set.items()):
                family.add_metric([*self.labels, cluster, broker_set], count)
        return family


def _retrying(read: Callable[[], T]) -> T:
    """A scrape-time read of dicts the event loop may change meanwhile: retry on a race."""
    for _ in range(9):
        try:
            return read()
        except RuntimeError:  # "dictionary changed size during iteration"
            continue
    return read()


def _cumulative(counts: list[int]) -> list[tuple[str, float]]:
    total, out = 0, []
    for bound, count in zip((*REQUEST_LATENCY_BUCKETS_US, None), counts, strict=True):
        total += count
        out.append(("+Inf" if bound is None else str(float(bound)), float(total)))
    return out
