"""ControllerManager: the controller proper on one ControllerServer (RocketMQ 5's
``ControllerManager`` with the serving half of ``DLedgerController``).

Theory of operation.

- **Serving.** Only the serving leader (its no-op of the term committed) answers reads and
  writes; any other controller answers CONTROLLER_NOT_LEADER (2007) with RocketMQ's remark,
  the leader it knows of in the remark and, as ``GetMetaDataResponseHeader`` fields, in the
  ext fields (RocketMQ's brokers find the leader through CONTROLLER_GET_METADATA_INFO; ours
  may read it from the refusal). A read waits for ``read_barrier`` (ReadIndex), then computes
  its answer from the local state. A write does the same under one lock (RocketMQ's single
  event thread): barrier, compute the events (``request_handler``/``registration``), propose
  each and wait for its ``ApplyResult`` (5 s, RocketMQ's ``WAIT_TIMEOUT_OUT``); the first
  refusal is the answer, else the computed one.
- **Liveness.** Heartbeats (904) reach every controller; each keeps its own table. Only the
  serving leader acts: every ``scanNotActiveBrokerInterval`` it drops expired brokers and, for
  one that was its set's master, elects (``onBrokerInactive``); every
  ``scanInactiveMasterInterval`` it elects for sets whose master is inactive while a replica
  lives. A new leader judges each broker in its table by that broker's own clock (followers
  keep the table too); one absent from it is not judged for one heartbeat timeout (the
  grace of ``heartbeat.py``, which holds the inactive-master scan). A broker's closed
  connection is evidence at once: elect without waiting.
- **Elections** triggered here go as RocketMQ's controller trigger (broker id -1), up to
  ``electMasterMaxRetryCount`` attempts. After a new master, if ``notifyBrokerRoleChanged``,
  NOTIFY_BROKER_ROLE_CHANGED (1008) goes oneway to each live member (``NotifyService``: a newer
  epoch cancels a push still in flight to the same broker).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rocketq.controller.event import encode_event
from rocketq.controller.heartbeat import AlivePredicate, BrokerHeartbeatManager
from rocketq.controller.metadata_log import MetadataLog, NotLeaderError
from rocketq.controller.metrics import (
    ControllerMetrics,
    ControllerMetricsCollector,
    ElectionResult,
)
from rocketq.controller.notify import NotifyService
from rocketq.controller.raft import Role
from rocketq.controller.replicas_info import (
    ApplyResult,
    ControllerStateMachine,
    ReplicasInfoManager,
)
from rocketq.controller.request_handler import (
    ControllerResult,
    elect_master,
    role_change_notification,
    scan_need_reelect_broker_sets,
)
from rocketq.controller.server import ControllerServer
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.metrics_exporter import MetricsExporter
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.controller_headers import (
    ElectMasterRequestHeader,
    GetMetaDataResponseHeader,
)
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

#: ControllerRequestProcessor.WAIT_TIMEOUT_OUT: how long a request waits for the log
WAIT_TIMEOUT_S = 5.0
NOT_LEADER_REMARK = "The controller is not in leader state"

ELECTION_RESULTS = {
    ResponseCode.SUCCESS: ElectionResult.NEW_MASTER_ELECTED,
    ResponseCode.CONTROLLER_MASTER_STILL_EXIST: ElectionResult.KEEP_CURRENT_MASTER,
    ResponseCode.CONTROLLER_MASTER_NOT_AVAILABLE: ElectionResult.NO_MASTER_ELECTED,
    ResponseCode.CONTROLLER_ELECT_MASTER_FAILED: ElectionResult.NO_MASTER_ELECTED,
}


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class ControllerManager:
    def __init__(
        self,
        server: ControllerServer,
        state_machine: ControllerStateMachine,
        *,
        clock: Callable[[], int] = monotonic_ms,
        export_metrics: bool = True,
    ) -> None:
        """``export_metrics``: serve ``/metrics`` when ``metricsExporterType=PROM`` (the name
        server's embedded controller joins the name server's exporter instead)."""
        self.server = server
        self.config = server.config  # replaced by UPDATE_CONTROLLER_CONFIG
        self.state_machine = state_machine
        self.clock = clock
        self.heartbeats = BrokerHeartbeatManager()
        self.metrics = ControllerMetrics()
        self._export_metrics = export_metrics
        self.metrics_exporter: MetricsExporter | None = None
        self._write_lock = asyncio.Lock()
        self.notify_service = NotifyService()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False
        server.raft_node.add_role_listener(self._on_role_change)
        server.remoting_server.add_channel_close_listener(self._on_channel_close)
        server.add_service(self)
        server.metrics_collector = ControllerMetricsCollector.of_controller(
            server, self.heartbeats, state_machine, self.metrics, clock
        )

    @property
    def state(self) -> ReplicasInfoManager:
        return self.state_machine.replicas_info

    @property
    def log(self) -> MetadataLog:
        return self.server.metadata_log

    def alive(self) -> AlivePredicate:
        return self.heartbeats.alive_predicate(self.clock())

    # ---- lifecycle (ControllerServer starts and stops its services) ---------------------------

    async def start(self) -> None:
        config = self.config
        if self._export_metrics and config.metrics_exporter_type.upper() == "PROM":
            assert self.server.metrics_collector is not None
            self.metrics_exporter = MetricsExporter(self.server.metrics_collector)
            host = config.metrics_prom_exporter_host or "0.0.0.0"
            self.metrics_exporter.start(host, config.metrics_prom_exporter_port)
        await self.notify_service.start()
        brokers, masters = self._scan_not_active_broker, self._scan_inactive_master
        self._spawn(self._scan_loop("scan_not_active_broker_interval_ms", brokers))
        self._spawn(self._scan_loop("scan_inactive_master_interval_ms", masters))

    async def shutdown(self) -> None:
        self._stopping = True
        tasks, self._tasks = list(self._tasks), set()
        for task in tasks:
            # cancelled again until done: 3.11's wait_for can swallow a cancel that races the
            # inner future's result (an election then ran on through its retries)
            while not task.done():
                task.cancel()
                await asyncio.wait([task], timeout=0.1)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                task.result()
        await self.notify_service.shutdown()
        exporter, self.metrics_exporter = self.metrics_exporter, None
        if exporter is not None:
            await asyncio.to_thread(exporter.stop)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ---- serving -----------------------------------------------------------------------------

    def not_leader(self) -> RemotingCommand:
        leader, addr = self.server.leader_peer_id, self.server.leader_addr
        where = f"; the leader is {leader} at {addr}" if leader else "; no leader is known"
        return RemotingCommand.create_response(
            ResponseCode.CONTROLLER_NOT_LEADER,
            NOT_LEADER_REMARK + where,
            ext_fields=self.metadata().to_ext_fields(),
        )

    def metadata(self) -> GetMetaDataResponseHeader:
        """DLedgerController.getControllerMetadata: group, leader, isLeader, ``id:addr;`` peers."""
        peers = "".join(f"{peer}:{addr};" for peer, addr in sorted(self.config.peers.items()))
        return GetMetaDataResponseHeader(
            group=self.server.group,
            controller_leader_id=self.server.leader_peer_id,
            controller_leader_address=self.server.leader_addr,
            is_leader=self.server.is_leader,
            peers=peers,
        )

    async def read(self, compute: Callable[[], ControllerResult]) -> RemotingCommand:
        """Answer from the local state once a read of it is linearizable."""
        try:
            await self._barrier()
        except NotLeaderError:
            return self.not_leader()
        return respond(compute())

    async def write(self, compute: Callable[[], ControllerResult]) -> RemotingCommand:
        """Compute the events against the state read behind a barrier, commit them in order;
        the first refusal at apply is the answer. Raises TimeoutError after WAIT_TIMEOUT_S."""
        async with self._write_lock:
            try:
                await self._barrier()
                result = compute()
                for event in result.events:
                    proposal = self.log.propose(encode_event(event))
                    _, outcome = await asyncio.wait_for(proposal, WAIT_TIMEOUT_S)
                    if not isinstance(outcome, ApplyResult):
                        raise TypeError(f"the state machine answered {outcome!r}")
                    if not outcome.ok:
                        return RemotingCommand.create_response(outcome.code, outcome.remark)
            except NotLeaderError:
                return self.not_leader()
        return respond(result)

    async def _barrier(self) -> None:
        if not self.log.is_leader:
            raise NotLeaderError("not the serving leader", None)
        await asyncio.wait_for(self.log.read_barrier(), WAIT_TIMEOUT_S)

    # ---- elections ---------------------------------------------------------------------------

    async def elect(self, header: ElectMasterRequestHeader) -> RemotingCommand:
        """CONTROLLER_ELECT_MASTER, counted by result; a new master is pushed to its set."""

        def compute() -> ControllerResult:
            return elect_master(
                self.state,
                header,
                is_alive=self.alive(),
                live_info=self.heartbeats.get_broker_live_info,
                enable_elect_unclean_master=self.config.enable_elect_unclean_master,
            )

        response = await self.write(compute)
        result = ELECTION_RESULTS.get(ResponseCode(response.code))
        if result is not None:
            self.metrics.on_election(header.cluster_name, header.broker_name, result)
        if response.code == ResponseCode.SUCCESS and self.config.notify_broker_role_changed:
            self.notify_broker_role_changed(header.broker_name)
        return response

    async def trigger_elect_master(self, broker_name: str) -> bool:
        """ControllerManager.triggerElectMaster: up to electMasterMaxRetryCount attempts."""
        bs = self.state.get(broker_name)
        cluster = bs.cluster_name if bs is not None else ""
        header = ElectMasterRequestHeader(
            cluster_name=cluster, broker_name=broker_name, broker_id=-1, designate_elect=False
        )
        for attempt in range(self.config.elect_master_max_retry_count):
            if self._stopping:
                return False
            try:
                response = await self.elect(header)
            except TimeoutError:
                log.warning("elect-master in %s timed out (attempt %d)", broker_name, attempt)
                continue
            if response.code == ResponseCode.SUCCESS:
                log.info("elected a new master in broker set %s: %s", broker_name, response)
                return True
            log.warning("elect-master in %s: %s %s", broker_name, response.code, response.remark)
        return False

    async def on_broker_inactive(self, cluster: str, broker_name: str, broker_id: int) -> None:
        """ControllerManager.onBrokerInactive: elect when the inactive broker was the master."""
        bs = self.state.get(broker_name)
        if not self.log.is_leader or bs is None or bs.master_broker_id != broker_id:
            log.info("broker %s/%s id %d is inactive", cluster, broker_name, broker_id)
            return
        log.info("master %s/%s id %d is inactive: electing", cluster, broker_name, broker_id)
        await self.trigger_elect_master(broker_name)

    def notify_broker_role_changed(self, broker_name: str) -> None:
        """ControllerManager.notifyBrokerRoleChanged: push to each live member of the set."""
        notification = role_change_notification(self.state, broker_name)
        bs = self.state.get(broker_name)
        if notification is None or bs is None:
            return
        alive = self.alive()
        for broker_id, addr in bs.broker_id_table().items():
            if alive(bs.cluster_name, broker_name, broker_id):
                self.notify_service.notify_broker(addr, *notification)

    # ---- liveness ----------------------------------------------------------------------------

    async def _scan_loop(self, interval_key: str, scan: Callable[[], list[str]]) -> None:
        """Every interval (read each round: updateControllerConfig may change it), on the
        serving leader only: elect for the broker sets ``scan`` names."""
        while True:
            interval_ms: int = getattr(self.config, interval_key)
            await asyncio.sleep(interval_ms / 1000)
            if not self.log.is_leader:
                continue
            try:
                for broker_name in scan():
                    await self.trigger_elect_master(broker_name)
            except Exception:  # one failed scan must not stop the next
                log.exception("liveness scan failed")

    def _scan_not_active_broker(self) -> list[str]:
        """The sets whose master just expired (DefaultBrokerHeartbeatManager.scanNotActiveBroker
        then onBrokerInactive)."""
        names = []
        for info in self.heartbeats.scan_not_active_broker(self.clock()):
            bs = self.state.get(info.broker_name)
            log.info("broker %s id %d expired", info.broker_name, info.broker_id)
            if bs is not None and bs.master_broker_id == info.broker_id:
                names.append(info.broker_name)
        return names

    def _scan_inactive_master(self) -> list[str]:
        if self.heartbeats.in_grace(self.clock()):
            return []
        return scan_need_reelect_broker_sets(self.state, self.alive())

    def _on_channel_close(self, channel: RemotingChannel) -> None:
        info = self.heartbeats.on_broker_channel_close(channel)
        if info is not None and self.log.is_leader:
            self._spawn(
                self.on_broker_inactive(info.cluster_name, info.broker_name, info.broker_id)
            )

    def _on_role_change(self, role: Role, term: int, leader: int | None) -> None:
        if role is Role.LEADER:
            self.heartbeats.on_become_leader(self.clock())


def respond(result: ControllerResult) -> RemotingCommand:
    return RemotingCommand.create_response(
        result.code,
        result.remark,
        ext_fields=result.header.to_ext_fields() if result.header is not None else None,
        body=result.body or b"",
    )
