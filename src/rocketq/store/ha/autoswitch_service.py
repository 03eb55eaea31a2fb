"""AutoSwitchHAService: replication in controller mode (RocketMQ 5's ``AutoSwitchHAService``),
switching between master and slave at the word of the broker's ReplicasManager.

Theory of operation
-------------------
- :meth:`change_to_master` ``(epoch)``: refused below the last epoch; closes the links, cuts a
  torn tail but keeps every valid byte, drops the epochs past the cut and appends
  ``<epoch, maxPhyOffset>`` (a store written in classic mode starts its first epoch at its first
  byte, so nothing it holds lies outside an epoch; the same epoch again keeps its entry), then
  dispatches what is committed and rebuilds the queue offsets. The in-sync set is this broker.
- :meth:`change_to_slave` ``(master_addr, epoch, broker_id)``: closes the links and starts an
  :class:`AutoSwitchHAClient` towards the master's HA address.

On a master the :class:`SyncStateSetTracker` keeps the in-sync set (committed plus proposed
while a change is pending). A caught-up slave is proposed for expansion from its ack;
:meth:`maybe_shrink_sync_state_set` (called every ``checkSyncStateSetPeriod``) and a closed
link propose shrinks. Proposals go to the listeners, which forward them to the controller
(CONTROLLER_ALTER_SYNC_STATE_SET); its answer comes back through :meth:`set_sync_state_set`.

The confirm offset is the lowest ack of the in-sync set (the master's max offset when the set
is only itself or ``allAckInSyncStateSet`` is off); a slave takes it from the transfer headers.
It bounds the consume queues and is kept in the checkpoint's ``confirmPhyOffset``. SYNC sends
are answered by the tracker's ack rule; puts are refused below ``minInSyncReplicas``.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from rocketq.store.ha.autoswitch_client import AutoSwitchHAClient
from rocketq.store.ha.autoswitch_connection import AutoSwitchHAConnection
from rocketq.store.ha.epoch_file import EpochEntry
from rocketq.store.ha.epoch_file_cache import EpochFileCache
from rocketq.store.ha.ha_connection import HAConnection
from rocketq.store.ha.ha_service import HAService
from rocketq.store.ha.log_truncation import truncate_files, truncate_invalid_msg
from rocketq.store.ha.replica_store import ControllerModeStore
from rocketq.store.ha.sync_state_set import SyncStateSetTracker
from rocketq.store.results import PutMessageStatus

log = logging.getLogger(__name__)

SyncStateSetListener = Callable[[frozenset[int]], None]


class AutoSwitchHAService(HAService):
    def __init__(self, store: ControllerModeStore) -> None:
        super().__init__(store)
        self.recoverable = store
        self.ha_client = None  # a slave's client exists only after change_to_slave
        self.epoch_cache = EpochFileCache(self.config.epoch_file_path)
        self.local_broker_id = -1
        self.is_master = False
        self.tracker: SyncStateSetTracker | None = None
        self._sss_lock = threading.RLock()
        self._confirm_offset = 0  # when the store has no checkpoint (not loaded)
        self._listeners: list[SyncStateSetListener] = []
        self._notifier = ThreadPoolExecutor(1, thread_name_prefix="AutoSwitchHAService")

    def get_max_phy_offset(self) -> int:
        return self.commit_log.get_max_offset()

    def shutdown(self) -> None:
        super().shutdown()
        self._notifier.shutdown(wait=True)

    # ------------------------------------------------------------------ role changes

    def change_to_master(self, epoch: int) -> bool:
        last = self.epoch_cache.last_epoch()
        if epoch < last:
            log.warning("new master epoch %d < last epoch %d: not master", epoch, last)
            return False
        self._stop_role()
        cut = self.truncate_invalid_msg()
        if cut >= 0:
            self.epoch_cache.truncate_suffix_by_offset(cut)
        cl = self.commit_log
        start = cl.get_max_offset()
        if self.epoch_cache.entry_count() == 0:  # classic-mode data joins the first epoch
            start = max(0, min(cl.get_min_offset(), start))
        if self.epoch_cache.last_epoch() != epoch and not self.epoch_cache.append_entry(
            EpochEntry(epoch, start)
        ):
            log.error(
                "epoch %d at %d does not follow %s", epoch, start, self.epoch_cache.all_entries()
            )
            return False
        with self._sss_lock:
            me = max(self.local_broker_id, 0)
            self.tracker = SyncStateSetTracker(
                me, frozenset({me}), max_not_catchup_ms=self.config.ha_max_time_slave_not_catchup_ms
            )
            self.is_master = True
        self.push2slave_max_offset = 0
        self.get_confirm_offset()  # the whole log: the set is only this broker
        store = self.recoverable
        store.reput_service.do_reput()  # what is committed, before serving as master
        with cl.put_lock:
            cl.topic_queue_table = store.consume_queues.topic_queue_offsets(
                max(0, cl.get_min_offset())
            )
        log.info("HA changed to master at epoch %d from offset %d", epoch, start)
        return True

    def change_to_slave(self, master_addr: str, epoch: int, broker_id: int) -> bool:
        """Replicate from ``master_addr`` (the master's HA address, host:haPort)."""
        last = self.epoch_cache.last_epoch()
        if epoch < last:
            log.warning("new master epoch %d < last epoch %d: not slave", epoch, last)
            return False
        self._stop_role()
        self.local_broker_id = broker_id
        client = AutoSwitchHAClient(self.store, self, broker_id)
        client.update_ha_master_address(master_addr)
        self.ha_client = client
        client.start()
        log.info(
            "HA changed to slave of %s at epoch %d as broker %d", master_addr, epoch, broker_id
        )
        return True

    def set_local_broker_id(self, broker_id: int) -> None:
        self.local_broker_id = broker_id

    def _stop_role(self) -> None:
        with self._sss_lock:
            self.tracker = None
            self.is_master = False
        client, self.ha_client = self.ha_client, None
        if client is not None:
            client.shutdown()
        for conn in list(self.connections):
            conn.shutdown()

    def truncate_invalid_msg(self) -> int:
        return truncate_invalid_msg(self.recoverable)

    def truncate_files(self, offset: int, reason: str) -> None:
        truncate_files(self.recoverable, offset, reason)

    def create_connection(self, sock: socket.socket, addr: str) -> HAConnection:
        return AutoSwitchHAConnection(self, sock, addr)

    # ------------------------------------------------------------------ confirm offset

    def get_confirm_offset(self) -> int:
        """CommitLog.getConfirmOffset in controller mode: a master whose set is only itself, or
        that does not wait for all of it, confirms everything it has."""
        with self._sss_lock:
            tracker = self.tracker
            if tracker is not None and (
                len(tracker.local) == 1 or not self.config.all_ack_in_sync_state_set
            ):
                return self._store_confirm(self.commit_log.get_max_offset())
        return self._stored_confirm()

    def set_confirm_offset(self, offset: int) -> None:
        self._store_confirm(offset)
        self.recoverable.reput_service.wakeup()

    def _stored_confirm(self) -> int:
        cp = self.recoverable.checkpoint
        if cp is not None:
            return cp.confirm_phy_offset
        return self._confirm_offset

    def _store_confirm(self, offset: int) -> int:
        self._confirm_offset = offset
        cp = self.recoverable.checkpoint
        if cp is not None:
            cp.confirm_phy_offset = offset
        return offset

    def _acks(self) -> dict[int, int]:
        acks: dict[int, int] = {}
        for conn in list(self.connections):
            if isinstance(conn, AutoSwitchHAConnection) and conn.slave_id >= 0:
                acks[conn.slave_id] = max(acks.get(conn.slave_id, -1), conn.slave_ack_offset)
        return acks

    def _compute_confirm_offset(self, tracker: SyncStateSetTracker) -> int:
        current = self._stored_confirm()
        return tracker.compute_confirm_offset(
            self.commit_log.get_max_offset(), self._acks(), current
        )

    # ------------------------------------------------------------------ SyncStateSet

    def register_sync_state_set_changed_listener(self, listener: SyncStateSetListener) -> None:
        self._listeners.append(listener)

    def sync_state_set(self) -> frozenset[int]:
        """The set in force (committed plus proposed while a change is pending)."""
        with self._sss_lock:
            return frozenset() if self.tracker is None else self.tracker.sync_state_set()

    def local_sync_state_set(self) -> frozenset[int]:
        with self._sss_lock:
            return frozenset() if self.tracker is None else self.tracker.local

    def set_sync_state_set(self, committed: frozenset[int]) -> None:
        """The controller committed ``committed``: adopt it, recompute, release the sends."""
        with self._sss_lock:
            tracker = self.tracker
            if tracker is None:
                return
            tracker.set_sync_state_set(committed | {tracker.local_broker_id})
            log.info("SyncStateSet committed %s adopted", sorted(tracker.local))
            self._store_confirm(self._compute_confirm_offset(tracker))
        self.recoverable.reput_service.wakeup()  # the confirm offset may have moved
        self._release_sends()

    def update_caught_up_time(self, slave_id: int, caught_up_ms: int) -> None:
        with self._sss_lock:
            if self.tracker is not None and slave_id >= 0:
                self.tracker.update_caught_up_time(slave_id, caught_up_ms)

    def maybe_expand_sync_state_set(self, conn: AutoSwitchHAConnection, offset: int) -> None:
        last = self.epoch_cache.last_entry()
        with self._sss_lock:
            tracker = self.tracker
            if tracker is None or last is None:
                return
            before = tracker.pending
            proposal = tracker.maybe_expand(
                conn.slave_id,
                offset,
                confirm_offset=self.get_confirm_offset(),
                epoch_start_offset=last.start_offset,
                is_async_learner=conn.is_async_learner,
            )
        if proposal is not None and proposal != before:
            self._notify(proposal)

    def maybe_shrink_sync_state_set(self) -> frozenset[int] | None:
        """Propose dropping the slaves that have not caught up in time; the proposal or None."""
        with self._sss_lock:
            tracker = self.tracker
            if tracker is None:
                return None
            before = tracker.pending
            proposal = tracker.maybe_shrink(self.config.clock_ms())
        if proposal is not None and proposal != before:
            self._notify(proposal)
        return proposal

    def remove_connection(self, conn: HAConnection) -> None:
        super().remove_connection(conn)
        if not isinstance(conn, AutoSwitchHAConnection) or conn.slave_id < 0:
            return
        if conn.slave_id in self._acks():  # the slave linked again meanwhile
            return
        with self._sss_lock:
            tracker = self.tracker
            if tracker is None or conn.slave_id not in tracker.local:
                return
            tracker.remove_connection(conn.slave_id)
        self.maybe_shrink_sync_state_set()

    def _notify(self, proposal: frozenset[int]) -> None:
        with self._sss_lock:
            tracker = self.tracker
            local = sorted(tracker.local) if tracker is not None else []
            in_force = sorted(tracker.sync_state_set()) if tracker is not None else []
        log.info(
            "SyncStateSet change proposed: %s (committed %s, in force %s)",
            sorted(proposal),
            local,
            in_force,
        )
        for listener in list(self._listeners):
            self._notifier.submit(listener, proposal)

    # ------------------------------------------------------------------ acks of SYNC sends

    def on_slave_ack(self, conn: AutoSwitchHAConnection) -> None:
        with self._sss_lock:
            tracker = self.tracker
            if tracker is None:
                return
            if conn.slave_id in tracker.sync_state_set():
                self._store_confirm(self._compute_confirm_offset(tracker))
        self.recoverable.reput_service.wakeup()
        self._release_sends()

    def ack_offset(self) -> int:
        """The highest end offset the ack rule holds for now (-1: none)."""
        max_offset, acks, cfg = self.commit_log.get_max_offset(), self._acks(), self.config
        with self._sss_lock:
            if self.tracker is None:
                return -1
            return self.tracker.ack_offset(
                max_offset,
                acks,
                all_ack=cfg.all_ack_in_sync_state_set,
                in_sync_replicas=cfg.in_sync_replicas,
            )

    def _release_sends(self) -> None:
        offset = self.ack_offset()
        if offset > 0:
            self.notify_transfer_some(offset)

    def put_request(self, next_offset: int) -> Future[PutMessageStatus]:
        if self.ack_offset() >= next_offset:
            done: Future[PutMessageStatus] = Future()
            done.set_result(PutMessageStatus.PUT_OK)
            return done
        return super().put_request(next_offset)

    def is_slave_ok(self, master_put_where: int) -> bool:
        return True  # controller mode refuses by the in-sync set instead

    def in_sync_replicas_enough(self) -> bool:
        with self._sss_lock:
            count = 0 if self.tracker is None else self.tracker.in_sync_replicas_nums()
        return count >= self.config.min_in_sync_replicas
