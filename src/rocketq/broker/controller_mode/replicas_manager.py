"""ReplicasManager: a controller-mode broker's side of failover (RocketMQ 5's
``broker/controller/ReplicasManager``).

Theory of operation
-------------------
The broker starts **fenced**: no sends, pulls or pops (``fencing.py``), no name-server
registration. Start-up (``startBasicService``), retried until it succeeds:

1. find the controller leader (CONTROLLER_GET_METADATA_INFO on each ``controllerAddr``); with
   none reachable the broker stays fenced and says so in one line;
2. the persistent broker id (``registration.obtain_broker_id``: ``brokerIdentity``);
3. CONTROLLER_REGISTER_BROKER, then one heartbeat; with no master yet, CONTROLLER_ELECT_MASTER
   for itself. The answer gives the role; the fence lifts.

Then, as RocketMQ does: heartbeats (BROKER_HEARTBEAT with epoch, max offset, confirm offset,
timeout and priority) to **every** controller every ``brokerHeartbeatInterval``; the replica
info (CONTROLLER_GET_REPLICA_INFO) every ``syncBrokerMetadataPeriod`` and on each
NOTIFY_BROKER_ROLE_CHANGED push; the leader's address every ``syncControllerMetadataPeriod``.

Every role change is keyed on ``newMasterEpoch > masterEpoch`` (``role.py`` does the switch).
A master forwards its HA service's SyncStateSet proposals to the controller
(CONTROLLER_ALTER_SYNC_STATE_SET) and adopts what was committed; every
``checkSyncStateSetPeriod`` it asks the HA service whether a slave must leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
    ReplicaView,
)
from rocketq.broker.controller_mode.registration import BrokerIdentityRequest, obtain_broker_id
from rocketq.broker.controller_mode.role import ControllerModeBroker, RoleSwitch
from rocketq.errors import ConfigError, CorruptionError
from rocketq.remoting.protocol.controller_headers import BrokerHeartbeatRequestHeader
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

#: ReplicasManager.RETRY_INTERVAL_SECOND is 5 s; we retry at the heartbeat pace, at most 5 s
MAX_RETRY_S = 5.0


class ReplicasManager(RoleSwitch):
    def __init__(self, broker: ControllerModeBroker) -> None:
        super().__init__(broker)
        cfg = broker.config
        self.client = ControllerClient(
            cfg.controller_addr_list,
            timeout_s=max(1.0, cfg.send_heartbeat_timeout_ms / 1000 * 3),
            close_silent_after_s=2 * cfg.controller_heart_beat_timeout_ms / 1000,
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._role_changes: set[asyncio.Task[None]] = set()  # pushed changes, run to their end
        self._said: int | None = None  # the last failure said (a code; -1: unreachable)
        self.start_attempts = 0
        self.start_failure = ""  # why start-up gave up for good (the broker stays fenced)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self.ha.register_sync_state_set_changed_listener(self._on_proposal_threadsafe)
        self._tasks = [
            loop.create_task(self._start_then_sync()),
            loop.create_task(self._every(self.config.broker_heartbeat_interval_ms, self.heartbeat)),
        ]

    async def shutdown(self) -> None:
        tasks = [*self._tasks, *self.role_tasks(), *self._role_changes]
        self._tasks = []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.client.shutdown()

    @property
    def retry_s(self) -> float:
        return min(MAX_RETRY_S, self.config.broker_heartbeat_interval_ms / 1000)

    async def _start_then_sync(self) -> None:
        while True:  # a retry schedule (startBasicService's), not a wait for an event
            try:
                if await self.start_basic_service():
                    break
            except (ConfigError, CorruptionError) as exc:  # the operator must act
                self.start_failure = str(exc)
            if self.start_failure:  # one line, no trace: the reason says it all
                log.error(
                    "controller mode cannot start: %s; the broker stays fenced", self.start_failure
                )
                return
            await asyncio.sleep(self.retry_s)
        cfg = self.config
        loop = asyncio.get_running_loop()
        self._tasks += [
            loop.create_task(self._every(cfg.sync_broker_metadata_period_ms, self.sync_metadata)),
            loop.create_task(
                self._every(cfg.sync_controller_metadata_period_ms, self.client.find_leader)
            ),
        ]

    async def start_basic_service(self) -> bool:
        """Leader, id, register, role (``startBasicService``); False to try again later."""
        cfg = self.config
        self.start_attempts += 1
        try:
            await self.client.find_leader()
            if self.broker_controller_id is None:
                who = BrokerIdentityRequest(
                    cfg.broker_cluster_name,
                    cfg.broker_name,
                    self.broker.broker_addr,
                    cfg.broker_identity_path,
                )
                self.broker_controller_id = await obtain_broker_id(self.client, who)
                self.ha.set_local_broker_id(self.broker_controller_id)
            view = await self.client.register(
                cfg.broker_cluster_name,
                cfg.broker_name,
                self.broker_controller_id,
                self.broker.broker_addr,
            )
            await self.heartbeat()
            if not view.has_master:
                view = await self.client.elect(
                    cfg.broker_cluster_name, cfg.broker_name, self.broker_controller_id
                )
        except ControllerRequestError as exc:
            self._say_unreachable(exc)
            return False
        if not view.has_master:
            log.warning("broker set %s has no master yet; fenced", cfg.broker_name)
            return False
        await self.change_broker_role(view)
        self._said = None
        return not self.fenced

    def _say_unreachable(self, exc: ControllerRequestError) -> None:
        """One line per kind of failure, not one per retry."""
        if self._said == exc.code:
            return
        self._said = exc.code
        if exc.code != -1:
            log.warning("controller refused broker %s: %s", self.broker.broker_addr, exc)
            return
        log.error(
            "no controller reachable at %s: broker %s stays fenced (no sends, no pulls) "
            "until one answers",
            self.config.controller_addr,
            self.broker.broker_addr,
        )

    # ------------------------------------------------------------------ periodic

    async def heartbeat(self) -> None:
        """BROKER_HEARTBEAT to every controller (``sendHeartbeatToController``)."""
        if self.broker_controller_id is None:
            return
        cfg, store = self.config, self.broker.message_store
        header = BrokerHeartbeatRequestHeader(
            cluster_name=cfg.broker_cluster_name,
            broker_addr=self.broker.broker_addr,
            broker_name=cfg.broker_name,
            broker_id=self.broker_controller_id,
            epoch=self.ha.epoch_cache.last_epoch(),
            max_offset=store.get_max_phy_offset(),
            confirm_offset=self.ha.get_confirm_offset(),
            heartbeat_timeout_mills=cfg.controller_heart_beat_timeout_ms,
            election_priority=cfg.broker_election_priority,
        )
        timeout_s = cfg.send_heartbeat_timeout_ms / 1000

        async def one(addr: str) -> None:
            sent = time.monotonic()
            try:
                await asyncio.wait_for(self.client.heartbeat(addr, header), timeout_s)
            except TimeoutError:
                self.client.note_timeout(addr, sent)
            except ControllerRequestError:
                pass

        await asyncio.gather(*(one(a) for a in cfg.controller_addr_list))

    async def sync_metadata(self) -> None:
        """CONTROLLER_GET_REPLICA_INFO (``schedulingSyncBrokerMetadata``): a newer epoch
        changes the role, no master asks for an election, the same epoch refreshes the set."""
        cfg = self.config
        try:
            view = await self.client.get_replica_info(cfg.broker_name)
        except ControllerRequestError as exc:
            if exc.code == ResponseCode.CONTROLLER_BROKER_METADATA_NOT_EXIST and (
                self.broker_controller_id is not None
            ):
                await self.client.register(
                    cfg.broker_cluster_name,
                    cfg.broker_name,
                    self.broker_controller_id,
                    self.broker.broker_addr,
                )
            log.debug("replica info of %s: %s", cfg.broker_name, exc)
            return
        if not view.has_master and self.broker_controller_id is not None:
            view = await self.client.elect(
                cfg.broker_cluster_name, cfg.broker_name, self.broker_controller_id
            )
        await self.change_broker_role(view)

    async def check_sync_state_set(self) -> None:
        """Every checkSyncStateSetPeriod on a master: shrink, or report a proposal again
        that the controller has not answered (``checkSyncStateSetAndDoReport``)."""
        self.ha.maybe_shrink_sync_state_set()
        tracker = self.ha.tracker
        pending = tracker.pending if tracker is not None else None
        if pending is not None:
            await self.report_sync_state_set(pending)

    # ------------------------------------------------------------------ SyncStateSet

    def _on_proposal_threadsafe(self, proposal: frozenset[int]) -> None:
        """The HA service's listener (its notifier thread): report on the loop."""
        report = self.report_sync_state_set(proposal)
        try:
            future = asyncio.run_coroutine_threadsafe(report, self.loop)
        except RuntimeError:  # the loop is closed: the broker is shutting down
            report.close()
            return
        with contextlib.suppress(Exception):  # logged by the report itself
            future.result(timeout=self.client.timeout_s * 2)  # one report at a time, in order

    async def report_sync_state_set(self, proposal: frozenset[int]) -> None:
        """CONTROLLER_ALTER_SYNC_STATE_SET; the committed set goes back to the HA service."""
        me = self.broker_controller_id
        if me is None or not self.is_master:
            return
        try:
            committed = await self.client.alter_sync_state_set(
                self.config.broker_name,
                me,
                self.master_epoch,
                proposal | {me},
                self.sync_state_set_epoch,
            )
        except ControllerRequestError as exc:
            log.warning("SyncStateSet %s not committed: %s", sorted(proposal), exc)
            return
        self.change_sync_state_set(
            frozenset(committed.sync_state_set), committed.sync_state_set_epoch
        )

    # ------------------------------------------------------------------ helpers

    def start_check_sync_state_set(self) -> asyncio.Task[None]:
        return self.loop.create_task(
            self._every(self.config.check_sync_state_set_period_ms, self.check_sync_state_set)
        )

    async def on_role_push(self, view: ReplicaView) -> None:
        """NOTIFY_BROKER_ROLE_CHANGED: act on it as on a replica-info answer. The change runs
        to its end even if the push's connection closes meanwhile (a controller leader that
        pushed, then lost its leadership): cancelled with the push's task, a promotion was
        left half done (HA master, pop offsets not moved)."""
        if self.broker_controller_id is not None:
            task = self.loop.create_task(self.change_broker_role(view))
            self._role_changes.add(task)
            task.add_done_callback(self._role_changes.discard)
            await asyncio.shield(task)

    @staticmethod
    async def _every(period_ms: int, action: Callable[[], Awaitable[object]]) -> None:
        while True:
            await asyncio.sleep(period_ms / 1000)
            try:
                await action()
            except ControllerRequestError as exc:
                log.debug("controller request failed: %s", exc)
            except Exception:  # a periodic task outlives one failed round
                log.exception("replicas manager task failed")
