from __future__ import annotations

import threading
from pathlib import Path

from rocketq.store import PutMessageStatus
from rocketq.store.commitlog import CommitLog, EncodedMessage
from rocketq.store.flush import FlushRealTimeService, GroupCommitService
from rocketq.testing.store import commit_log_config, new_msg, open_store
from rocketq.testing.wait import until_sync
from tests.store.records import build_record


def test_group_commit_completes_requests_after_flush_and_shares_fsyncs(tmp_path: Path) -> None:
    config = commit_log_config(tmp_path)
    cl = CommitLog(config)
    flushed_ts: list[int] = []
    svc = GroupCommitService(
        config, cl.mapped_file_queue, lambda: cl.store_timestamp, flushed_ts.append
    )
    svc.start()
    statuses: list[PutMessageStatus] = []
    lock = threading.Lock()

    def writer() -> None:
        for _ in range(20):
            r = cl.append(EncodedMessage(build_record("T", 0, b"x" * 100), "T", 0))
            status = svc.put_request(r.wrote_offset + r.wrote_bytes).result(timeout=10)
            assert cl.mapped_file_queue.flushed_where >= r.wrote_offset + r.wrote_bytes
            with lock:
                statuses.append(status)

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    svc.shutdown()
    assert statuses == [PutMessageStatus.PUT_OK] * 160
    # a flush is made only for bytes not yet flushed, so never more than one a record (how
    # many requests share one depends on the threads' timing: the next test pins the sharing)
    assert svc.flush_count <= 160
    assert flushed_ts
    assert flushed_ts[-1] == 1700000000123
    cl.shutdown()


def test_group_commit_serves_every_waiting_request_with_one_flush(tmp_path: Path) -> None:
    config = commit_log_config(tmp_path)
    cl = CommitLog(config)
    svc = GroupCommitService(config, cl.mapped_file_queue, lambda: cl.store_timestamp)
    futures = []
    for _ in range(8):  # eight writers waiting before the service first runs
        r = cl.append(EncodedMessage(build_record("T", 0, b"x" * 100), "T", 0))
        futures.append(svc.put_request(r.wrote_offset + r.wrote_bytes))
    svc.start()
    try:
        assert [f.result(timeout=10) for f in futures] == [PutMessageStatus.PUT_OK] * 8
        assert svc.flush_count == 1  # GroupCommitService.doCommit: one flush for the batch
        assert cl.mapped_file_queue.flushed_where == r.wrote_offset + r.wrote_bytes
    finally:
        svc.shutdown()
        cl.shutdown()


def test_group_commit_times_out_a_request_that_cannot_be_flushed(tmp_path: Path) -> None:
    config = commit_log_config(tmp_path, sync_flush_timeout_ms=50)
    cl = CommitLog(config)
    svc = GroupCommitService(config, cl.mapped_file_queue, lambda: 0)
    svc.start()
    cl.append(EncodedMessage(build_record("T", 0, b"x"), "T", 0))
    future = svc.put_request(10**9)  # never written, so never flushed
    assert future.result(timeout=5) is PutMessageStatus.FLUSH_DISK_TIMEOUT
    svc.shutdown()
    cl.shutdown()


def test_flush_real_time_service_flushes_at_shutdown(tmp_path: Path) -> None:
    config = commit_log_config(tmp_path, flush_interval_commit_log_ms=10_000)
    cl = CommitLog(config)
    seen: list[int] = []
    svc = FlushRealTimeService(
        config, cl.mapped_file_queue, lambda: cl.store_timestamp, seen.append
    )
    svc.start()
    r = cl.append(EncodedMessage(build_record("T", 0, b"x"), "T", 0))
    svc.shutdown()
    assert cl.mapped_file_queue.flushed_where == r.wrote_bytes
    assert seen[-1] == 1700000000123
    cl.shutdown()


def test_flush_and_wait_leader_flushes_for_concurrent_writers(tmp_path: Path) -> None:
    config = commit_log_config(tmp_path)
    cl = CommitLog(config)
    svc = GroupCommitService(config, cl.mapped_file_queue, lambda: cl.store_timestamp)
    statuses: list[PutMessageStatus] = []

    def writer() -> None:
        for _ in range(25):
            r = cl.append(EncodedMessage(build_record("T", 0, b"x" * 200), "T", 0))
            statuses.append(svc.flush_and_wait(r.wrote_offset + r.wrote_bytes))
            assert cl.mapped_file_queue.flushed_where >= r.wrote_offset + r.wrote_bytes

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert statuses == [PutMessageStatus.PUT_OK] * 200
    assert svc.flush_count <= 200
    cl.shutdown()


def test_a_sync_flush_put_that_does_not_wait_completes_at_once_and_is_flushed_soon(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path)
    try:
        queue = store.commit_log.mapped_file_queue
        future = store.async_put_message(new_msg(body=b"fire"), wait_store_msg_ok=False)
        assert future.done()
        result = future.result()
        assert result.status is PutMessageStatus.PUT_OK
        assert result.append_result is not None
        end = result.append_result.wrote_offset + result.append_result.wrote_bytes

        def flushed() -> bool:
            store.flush_service.wakeup()
            return queue.flushed_where >= end

        assert until_sync(flushed, 10.0, 0.005)  # the group commit flushed it without a request
    finally:
        store.shutdown()
