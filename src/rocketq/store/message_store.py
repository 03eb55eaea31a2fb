"""MessageStore: RocketMQ's DefaultMessageStore, the store's public face.

``load`` takes the process lock (the ``lock`` file), maps the files and recovers
(``recovery.py``); ``start`` starts the flush, reput and clean services and creates ``abort``;
``shutdown`` stops them, waits for dispatch to catch up and removes ``abort`` only then (as
RocketMQ's DefaultMessageStore#shutdown).
The write side (puts, the flush and replication waits) is ``message_writer``. Reads go
through the consume queues, so a message is served only once dispatched. The queues live in
``consume_queue_table``, the index in ``index_service``; the read side (``get_message`` and
lookups) is ``message_reader``.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import time
from collections.abc import Callable

from rocketq.common import native_record
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.topic import SCHEDULE_TOPIC
from rocketq.errors import IllegalStateError, StoreLockedError
from rocketq.store import paths
from rocketq.store.checkpoint import StoreCheckpoint
from rocketq.store.clean import CleanCommitLogService, CleanConsumeQueueService
from rocketq.store.commitlog import CommitLog, DispatchRequest
from rocketq.store.config import BrokerRole, FlushDiskType, StoreConfig
from rocketq.store.consume_queue import ConsumeQueue
from rocketq.store.consume_queue_table import ConsumeQueueTable
from rocketq.store.dispatch_arrivals import DirectArrival
from rocketq.store.dispatch_checkpoint import DispatchCheckpoint, DispatchPoint, tail_of
from rocketq.store.flush import (
    FlushConsumeQueueService,
    FlushRealTimeService,
    GroupCommitService,
)
from rocketq.store.ha.autoswitch_service import AutoSwitchHAService
from rocketq.store.ha.ha_service import HAService
from rocketq.store.index_file import IndexFile
from rocketq.store.index_service import IndexService
from rocketq.store.mapped_file import USE_FDATASYNC, MappedFileCreateError
from rocketq.store.message_reader import MessageReader
from rocketq.store.message_writer import MessageWriter
from rocketq.store.recovery import load_and_recover
from rocketq.store.reput import MessageArrivingListener, ReputMessageService
from rocketq.store.store_lock import describe_holder
from rocketq.store.sync_batch import SyncBatch
from rocketq.store.timer.timer_hook import TIMER_TOPIC
from rocketq.store.timer.timer_message_store import TimerMessageStore
from rocketq.store.warm import WarmMappedFileService

CQ_UNIT_SIZE = 20
LOCK_WAIT_S = 60.0
#: topics the direct dispatch leaves to the Python round (their tags code, the timer's wheel)
DIRECT_STOP_TOPICS = (SCHEDULE_TOPIC, TIMER_TOPIC)


class MessageStore(MessageWriter, MessageReader):
    def __init__(
        self,
        config: StoreConfig,
        *,
        message_arriving_listener: MessageArrivingListener | None = None,
        arrival_wanted: Callable[[], bool] | None = None,
    ) -> None:
        """``arrival_wanted`` (optional): whether ``message_arriving_listener`` has anyone
        to wake now; a dispatch run skips the listener's calls when it says False."""
        self.config = config
        self.root = config.store_path_root_dir
        self.commit_log = CommitLog(config, free_space_check=self._check_free_space)
        self.consume_queues = ConsumeQueueTable(
            paths.consume_queue_dir(self.root), config.mapped_file_size_consume_queue
        )
        self.index_service: IndexService | None = None
        self.checkpoint: StoreCheckpoint | None = None
        mfq = self.commit_log.mapped_file_queue
        ts = self._flushed_store_timestamp
        if config.flush_disk_type is FlushDiskType.SYNC_FLUSH:
            self.flush_service = GroupCommitService(config, mfq, ts, self._on_commit_log_flushed)
        else:
            self.flush_service = FlushRealTimeService(config, mfq, ts, self._on_commit_log_flushed)
        self.warm_service = WarmMappedFileService(config, mfq)
        self.flush_consume_queue_service = FlushConsumeQueueService(
            config, self.flush_consume_queues, self.checkpoint_dispatch
        )
        self.reput_service = ReputMessageService(
            self.commit_log, self, config.reput_fallback_wait_ms
        )
        self.reput_service.message_arriving_listener = message_arriving_listener
        self.reput_service.arrival_wanted = arrival_wanted
        self.clean_commit_log_service = CleanCommitLogService(self)
        self.clean_consume_queue_service = CleanConsumeQueueService(self)
        self.ha_service = (
            AutoSwitchHAService(self) if config.enable_controller_mode else HAService(self)
        )
        if isinstance(self.ha_service, AutoSwitchHAService):  # consumers see only what is confirmed
            self.reput_service.dispatch_bound = self.ha_service.get_confirm_offset
        #: RocketMQ 5's timer wheel (store/timer/), made at load when timerWheelEnable
        self.timer_message_store: TimerMessageStore | None = None
        self._timer_stale = False  # loaded before a demotion's truncation: reload to promote
        self.disk_full = False
        self.recovered_abnormally = False
        self.recovery_cut_reason = ""
        #: where the last load's commitlog scan started (tests read it)
        self.recovery_scan_start = 0
        #: made by load (recovery.py); written by :meth:`checkpoint_dispatch`
        self.dispatch_checkpoint: DispatchCheckpoint | None = None
        self._lock_fd: int | None = None
        self._loaded = False
        self._running = False

    @property
    def message_arriving_listener(self) -> MessageArrivingListener | None:
        return self.reput_service.message_arriving_listener

    @message_arriving_listener.setter
    def message_arriving_listener(self, listener: MessageArrivingListener | None) -> None:
        self.reput_service.message_arriving_listener = listener
        self.reput_service.arrival_wanted = None  # it was the old listener's

    def _flushed_store_timestamp(self) -> int:
        return self.commit_log.store_timestamp

    def _on_commit_log_flushed(self, store_timestamp: int) -> None:
        cp = self.checkpoint
        if cp is not None:
            cp.physic_msg_timestamp = store_timestamp

    # ------------------------------------------------------------------ lifecycle

    def load(self) -> bool:
        os.makedirs(self.root, exist_ok=True)
        self._lock()
        try:
            load_and_recover(self)
            if self.config.timer_wheel_enable:
                self.timer_message_store = TimerMessageStore(self, self.config)
                self.timer_message_store.load()
        except BaseException:
            self._unlock()
            raise
        self._loaded = True
        return True

    def start(self) -> None:
        if not self._loaded:
            raise IllegalStateError("MessageStore.start() before load()")
        self.reput_service.start()  # from where recovery's dispatch stopped
        self.flush_service.start()
        self.warm_service.start()
        self.flush_consume_queue_service.start()
        self.clean_commit_log_service.start()
        self.clean_consume_queue_service.start()
        with open(paths.abort_path(self.root), "w", encoding="ascii") as f:
            f.write(str(os.getpid()))
            f.flush()
            os.fsync(f.fileno())
        paths.fsync_dir(self.root)
        self._running = True
        if self.timer_message_store is not None and self.config.broker_role is not BrokerRole.SLAVE:
            self.timer_message_store.start()  # a slave keeps the files its master replicates

    def start_ha(self) -> int:
        """Start replication (listen on ha_listen_port; a slave connects to its master).

        The broker calls this after ``start``; a bare store (tools, tests) does not listen.
        Returns the bound HA port.
        """
        if not self._running:
            raise IllegalStateError("MessageStore.start_ha() before start()")
        self.ha_service.start()
        return self.ha_service.listen_port

    def set_broker_role(self, role: BrokerRole) -> None:
        """Switch the role at runtime (controller mode: ReplicasManager sets
        ``MessageStoreConfig.brokerRole`` on every role change): a SLAVE refuses puts at once;
        then the timer follows the role (:meth:`switch_timer_for_role`)."""
        self.config = self.config.replace(broker_role=role)
        self.switch_timer_for_role()

    def switch_timer_for_role(self) -> None:
        """The timer wheel delivers on a master only (RocketMQ 5's ``TimerMessageStore
        .isRunningDequeue``): a promoted store starts it, a demoted one stops it at once (its
        deliveries would be refused, and dropped after a few retries), and the next promotion
        recovers it afresh from its files, after whatever truncation the demotion brought.
        Stopping waits for the wheel's slot in progress: a caller on an event loop runs this
        in a thread, after setting the role with ``set_role_only``."""
        role = self.config.broker_role
        timer = self.timer_message_store
        if timer is None or not self._running:
            return
        if role is not BrokerRole.SLAVE and not timer.is_running:
            if self._timer_stale:
                timer = self._reload_timer(timer)
                self._timer_stale = False
            timer.start()
        elif role is BrokerRole.SLAVE and timer.is_running:
            timer.shutdown()
            self._reload_timer(timer)  # loaded, not started: a valid object while a slave
            self._timer_stale = True

    def set_role_only(self, role: BrokerRole) -> None:
        """The role alone (puts refused or taken from now on); the timer follows with
        :meth:`switch_timer_for_role`."""
        self.config = self.config.replace(broker_role=role)

    def _reload_timer(self, old: TimerMessageStore) -> TimerMessageStore:
        if old.is_running or self._timer_stale:
            old.shutdown()
        fresh = TimerMessageStore(self, self.config)
        fresh.load()
        self.timer_message_store = fresh
        return fresh

    def reput_start_offset(self) -> int:
        """4.x rule (DefaultMessageStore#start): the max physical end over all consume queues."""
        return max(self.consume_queues.max_physic_end(), max(0, self.commit_log.get_min_offset()))

    def shutdown(self) -> None:
        if not self._loaded:
            return
        if self.timer_message_store is not None:
            self.timer_message_store.shutdown()  # its last puts need a running store
            self.timer_message_store = None
        was_running = self._running
        self._running = False
        if was_running:
            self.ha_service.shutdown()
            self.clean_commit_log_service.shutdown()
            self.clean_consume_queue_service.shutdown()
            self.reput_service.shutdown()  # runs a final do_reput
            self.flush_service.shutdown()
            self.warm_service.shutdown()
            self.flush_consume_queue_service.shutdown()
        self.flush_consume_queues(0)
        caught_up = self.reput_service.dispatch_behind_bytes() == 0
        if self.dispatch_checkpoint is not None:
            self.checkpoint_dispatch()
            self.dispatch_checkpoint.close()
        if self.checkpoint is not None:
            self.checkpoint.shutdown()
        if self.index_service is not None:
            self.index_service.shutdown()
        self.consume_queues.shutdown()
        self.commit_log.shutdown()
        abort = paths.abort_path(self.root)
        if was_running and caught_up and os.path.exists(abort):
            os.unlink(abort)
            paths.fsync_dir(self.root)
        self._loaded = False
        self._unlock()

    def destroy(self) -> None:
        self.shutdown()
        shutil.rmtree(self.root, ignore_errors=True)

    def _lock(self) -> None:
        lock = paths.lock_path(self.root)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        except OSError as exc:
            os.close(fd)
            holder = describe_holder(lock)
            raise StoreLockedError(
                exc.errno, f"Lock failed, MQ already started, held by {holder}", lock
            ) from exc
        os.pwrite(fd, b"lock", 0)
        os.fsync(fd)
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            fcntl.lockf(self._lock_fd, fcntl.LOCK_UN, 1, 0)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _check_free_space(self, directory: str, size: int) -> None:
        st = os.statvfs(directory)
        if st.f_bavail * st.f_frsize < size:
            raise MappedFileCreateError(
                errno.ENOSPC, f"no space for a {size}-byte file in {directory}"
            )

    # ------------------------------------------------------------------ consume queues

    def find_consume_queue(
        self, topic: str, queue_id: int, create: bool = True
    ) -> ConsumeQueue | None:
        if create:
            return self.consume_queues.find_or_create(topic, queue_id)
        return self.consume_queues.find(topic, queue_id)

    def prepare_consume_queue(self, topic: str, queue_id: int) -> bool:
        """Create the first file of a master's queue that has had no message yet while other
        queues of its topic have, ahead of its first message (the broker calls this in a
        thread for a queue a consumer long-polls): the file's creation (fallocate, fdatasync,
        the directory's fsync) and its first page's fault then do not stall that message's
        dispatch on the broker's loop. The file is the one the first unit (offset 0) would
        create (ConsumeQueue.put_message_position_info_wrapper), made under the dispatch
        lock. False when there was nothing to do."""
        if self.config.broker_role is BrokerRole.SLAVE:
            return False
        queues = self.consume_queues.table.get(topic)
        if not queues or queue_id in queues:
            return False
        with self.reput_service.paused():
            if self.commit_log.topic_queue_table.get(f"{topic}-{queue_id}", 0) != 0:
                return False
            cq = self.consume_queues.find_or_create(topic, queue_id)
            mfq = cq.mapped_file_queue
            if mfq.mapped_files:
                return False
            mf = mfq.get_last_mapped_file_or_create(0)
            mfq.flushed_where = mf.file_from_offset
            cq.min_logic_offset = mf.file_from_offset
            mf.write_at(0, b"\0")  # the first page's fault happens here, over a zero
        return True

    def flush_consume_queues(self, least_pages: int = 0) -> None:
        """Flush CQs; a full flush also the index and the checkpoint (FlushConsumeQueueService)."""
        logics_ts = self._last_dispatched_ts
        self.consume_queues.flush(least_pages)
        if least_pages == 0 and self.checkpoint is not None:
            if logics_ts > 0:
                self.checkpoint.logics_msg_timestamp = logics_ts
            self.checkpoint.flush()

    _last_dispatched_ts = 0

    def checkpoint_dispatch(self) -> bool:
        """Write the dispatch checkpoint (``dispatch_checkpoint.py``): take P from the dispatch
        position and the commitlog's flushed end, flush what was dispatched below it (the
        consume queues, the index file being written), then write P. True when it did (every
        consume queue was flushed), False when P has not moved (nothing flushed)."""
        cp = self.dispatch_checkpoint
        if cp is None:
            return False
        mfq = self.commit_log.mapped_file_queue
        offset = min(self.reput_service.reput_from_offset, mfq.flushed_where)
        written = cp.written
        if offset <= 0 or (written is not None and offset == written.offset):
            return False
        mf = mfq.find_mapped_file_by_offset(offset - 1)
        if mf is None:
            return False
        tail_crc, tail_len = tail_of(mf.view, mf.file_from_offset, offset)
        point = DispatchPoint(offset, tail_crc, tail_len)
        if not USE_FDATASYNC:  # msync file by file (no descriptor sync)
            self.consume_queues.flush(0)
            if self.index_service is not None:
                self.index_service.sync_last()
            cp.write(point)
            return True
        batch = SyncBatch()  # the queues, the index and P: one call, one GIL re-acquire
        try:
            self.consume_queues.flush_into(batch, 0)
            if self.index_service is not None:
                self.index_service.sync_last_into(batch)
            cp.write(point, batch)
        finally:
            batch.release()  # the files held if the round failed before the syncs
        return True

    def dispatch_batch(self, requests: list[DispatchRequest]) -> None:
        """CommitLogDispatcherBuildConsumeQueue for a run of records (the index follows in
        :meth:`dispatch_index`, once the run's arrivals are notified)."""
        compiled = native_record.RECORD
        runs: dict[tuple[str, int], list[DispatchRequest]]  # a queue's units in one copy
        if compiled is not None:  # the runs grouped in C (dispatch.c)
            runs = compiled.dispatch_runs(requests)
        else:
            runs = {}
            for req in requests:
                if MessageSysFlag.has_consume_queue_unit(req.sys_flag):
                    run = runs.get((req.topic, req.queue_id))
                    if run is None:
                        runs[(req.topic, req.queue_id)] = [req]
                    else:
                        run.append(req)
        for (topic, queue_id), run in runs.items():
            self.consume_queues.find_or_create(topic, queue_id).put_message_position_infos(run)
        timer = self.timer_message_store
        if timer is not None and (TIMER_TOPIC, 0) in runs:
            timer.wheel_topic_dispatched()  # the enqueue sleeps until told
        if requests:
            self._dispatched(requests[-1].store_timestamp)
        elif self.warm_service.resting:
            self.warm_service.end_rest()

    def _dispatched(self, last_store_ts: int) -> None:
        if self.warm_service.resting:
            self.warm_service.end_rest()  # records were appended: the window is looked at
        self._last_dispatched_ts = last_store_ts
        if self.config.broker_role is BrokerRole.SLAVE and self.checkpoint is not None:
            # a slave's appends carry no local store time: take it at dispatch (4.x)
            self.checkpoint.physic_msg_timestamp = last_store_ts

    def dispatch_direct(
        self, offset: int, end: int, arrivals: list[DirectArrival] | None = None
    ) -> tuple[int, int]:
        """:meth:`dispatch_batch` and :meth:`dispatch_index` for the records from ``offset``
        (ending at or below ``end``) in one C call over the commitlog's bytes (``dispatch_direct``,
        reput_run.c), up to the first record it leaves to the Python round (a new queue or
        file, a skip, a transaction, the schedule and timer topics, a new index file, a bad
        record): (next offset, records dispatched). (offset, 0) without the C module.
        ``arrivals`` (a list) gets each dispatched record's ``DirectArrival`` (what a held
        pull's or a parked POP's wake-up reads), in commitlog order."""
        compiled = native_record.RECORD
        mf = self.commit_log.mapped_file_queue.find_mapped_file_by_offset(offset)
        if compiled is None or mf is None:
            return offset, 0
        base = mf.file_from_offset
        index = self.index_service if self.config.message_index_enable else None
        f: IndexFile | bool | None = False  # False: no index
        view = None
        if index is not None:  # only a dispatch run appends a file: no lock for the last
            files = index.index_file_list
            f = files[-1] if files else None
            view = f.mapped_file.view if f is not None else None
        pos, count, last_ts = compiled.dispatch_direct(
            mf.view,
            offset - base,
            min(mf.wrote_position, end - base),
            base,
            self.consume_queues.table,
            f,
            view,
            DIRECT_STOP_TOPICS,
            arrivals,
        )
        if count:
            self._dispatched(last_ts)
        return base + pos, count

    def dispatch_index(self, requests: list[DispatchRequest]) -> None:
        """CommitLogDispatcherBuildIndex for a run of records."""
        index = self.index_service if self.config.message_index_enable else None
        if index is not None:  # every put of the run, in C where it is built (index_puts)
            index.build_index_run(requests)

    def dispatch_behind_bytes(self) -> int:
        return self.reput_service.dispatch_behind_bytes()

    def get_max_phy_offset(self) -> int:
        return self.commit_log.get_max_offset()

    def dispatched_phy_offset(self) -> int:
        """Where dispatch stands (in controller mode the confirm offset holds it back)."""
        return self.reput_service.reput_from_offset

    def read_records(self, begin: int, end: int) -> list[DispatchRequest]:
        """The committed records in [begin, end) with their properties (the timer of a promoted
        master reads the undispatched tail for the old master's copies)."""
        records: list[DispatchRequest] = []
        while begin < end:
            requests, next_offset, bad = self.commit_log.read_dispatch_requests(
                begin, check_crc=False, max_bytes=end - begin
            )
            records.extend(r for r in requests if r.msg_size > 0 and r.commit_log_offset < end)
            if bad or next_offset <= begin:
                break
            begin = next_offset
        return records

    def get_min_phy_offset(self) -> int:
        return self.commit_log.get_min_offset()

    def now_ms(self) -> int:
        return self.config.clock_ms()

    def get_runtime_info(self) -> dict[str, str]:
        return {
            "commitLogMaxOffset": str(self.get_max_phy_offset()),
            "commitLogMinOffset": str(self.get_min_phy_offset()),
            "dispatchBehindBytes": str(self.dispatch_behind_bytes()),
            "putMessageDistributeTime": "",
        }

    def wait_for_dispatch(self, timeout_s: float = 10.0) -> bool:
        """Test and shutdown helper: wait until every committed byte is dispatched."""
        deadline = time.monotonic() + timeout_s
        while self.dispatch_behind_bytes() > 0:
            if time.monotonic() > deadline:
                return False
            self.reput_service.wakeup()
            time.sleep(0.001)
        return True
