"""Hypothesis state machine: MessageStore against a list model (put/get/flush/reopen/crash)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from rocketq.store import FlushDiskType, MessageStore, PutMessageStatus
from rocketq.store.dispatch_checkpoint import FILE_NAME
from rocketq.testing.store import new_msg, small_store_config

QUEUES = 2


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="rocketq-sm-"))
        self.flush_type = FlushDiskType.ASYNC_FLUSH
        self.store = self._open()
        self.model: list[list[bytes]] = [[] for _ in range(QUEUES)]
        self.ends: list[list[int]] = [[] for _ in range(QUEUES)]  # commitlog end of each put

    def _open(self) -> MessageStore:
        store = MessageStore(
            small_store_config(
                self.dir, flush_disk_type=self.flush_type, flush_interval_commit_log_ms=60_000
            )
        )
        store.load()
        store.start()
        return store

    @rule(qid=st.integers(0, QUEUES - 1), body=st.binary(min_size=0, max_size=3000))
    def put(self, qid: int, body: bytes) -> None:
        r = self.store.put_message(new_msg(queue_id=qid, body=body))
        assert r.status is PutMessageStatus.PUT_OK
        assert r.append_result is not None
        assert r.append_result.queue_offset == len(self.model[qid])
        self.model[qid].append(body)
        self.ends[qid].append(r.append_result.wrote_offset + r.append_result.wrote_bytes)

    @rule()
    def flush(self) -> None:
        self.store.commit_log.mapped_file_queue.flush(0)

    @rule()
    def reopen(self) -> None:
        self.store.shutdown()
        self.store = self._open()

    @rule()
    def crash(self) -> None:
        """Keep only flushed commitlog bytes: zero everything past the flushed offset."""
        mfq = self.store.commit_log.mapped_file_queue
        flushed_where = mfq.flushed_where
        point = self.dir / FILE_NAME  # the dispatch checkpoint as the crash leaves it
        saved = point.read_bytes() if point.exists() else None
        store = self.store
        # every service thread stops here: with _running False, shutdown() below stops none
        # of them, and a thread left running logs every second once teardown removes the dir
        for service in (
            store.reput_service,
            store.flush_service,
            store.ha_service,
            store.clean_commit_log_service,
            store.clean_consume_queue_service,
            store.warm_service,
            store.flush_consume_queue_service,
        ):
            service.shutdown()
        store._running = False
        for mf in mfq.mapped_files:
            start = max(0, flushed_where - mf.file_from_offset)
            if start < mf.file_size:
                mf.view[start:] = bytes(mf.file_size - start)
        self.store.shutdown()  # (writes a checkpoint a crash would not: put back below)
        if saved is None:
            point.unlink(missing_ok=True)
        else:
            point.write_bytes(saved)
        (self.dir / "abort").write_text("crash")
        for qid in range(QUEUES):
            keep = sum(1 for end in self.ends[qid] if end <= flushed_where)
            del self.model[qid][keep:]
            del self.ends[qid][keep:]
        self.store = self._open()

    @invariant()
    def readable(self) -> None:
        assert self.store.wait_for_dispatch()
        from rocketq.common.message_decoder import decode_message

        for qid in range(QUEUES):
            assert self.store.get_max_offset_in_queue("TopicTest", qid) == len(self.model[qid])
            got: list[bytes] = []
            offset = 0
            while offset < len(self.model[qid]):
                res = self.store.get_message("g", "TopicTest", qid, offset, 32)
                got += [decode_message(b).body for b in res.message_buffers]
                assert res.next_begin_offset > offset
                offset = res.next_begin_offset
            assert got == self.model[qid]

    def teardown(self) -> None:
        self.store.shutdown()
        shutil.rmtree(self.dir, ignore_errors=True)


StoreMachine.TestCase.settings = settings(max_examples=25, stateful_step_count=25, deadline=None)
test_store_state_machine = StoreMachine.TestCase
