from __future__ import annotations

import threading
from pathlib import Path

from rocketq.store.commitlog import CommitLog, DispatchRequest, EncodedMessage
from rocketq.store.reput import ReputMessageService
from rocketq.testing.store import commit_log_config
from tests.store.records import build_record, props_bytes


class Collector:
    def __init__(self) -> None:
        self.requests: list[DispatchRequest] = []
        self.batches = 0
        self.indexed: list[DispatchRequest] = []
        self.event = threading.Event()

    def dispatch_batch(self, requests: list[DispatchRequest]) -> None:
        self.requests.extend(requests)
        self.batches += 1
        self.event.set()

    def dispatch_index(self, requests: list[DispatchRequest]) -> None:
        self.indexed.extend(requests)


def test_reput_dispatches_committed_records_and_notifies_listener(tmp_path: Path) -> None:
    cl = CommitLog(commit_log_config(tmp_path))
    sink = Collector()
    svc = ReputMessageService(cl, sink, fallback_wait_ms=1000)
    arrivals: list[tuple[str, int, int, int]] = []
    svc.message_arriving_listener = lambda t, q, o, tags, ts, props: arrivals.append(
        (t, q, o, tags)
    )
    svc.start()
    try:
        props = props_bytes({"TAGS": "TagA", "KEYS": "k1"})
        for _ in range(3):
            cl.append(EncodedMessage(build_record("T", 1, b"x", props), "T", 1))
        cl.append(EncodedMessage(build_record("T", 1, b"half", sys_flag=4), "T", 1))
        svc.wakeup()  # a put wakes the service; the 1 s fallback would be too slow here
        for _ in range(100):
            if len(sink.requests) == 4:
                break
            sink.event.wait(0.1)
            sink.event.clear()
        assert len(sink.requests) == 4
        assert svc.dispatch_behind_bytes() == 0
        assert arrivals == [("T", 1, 0, 2598919), ("T", 1, 1, 2598919), ("T", 1, 2, 2598919)]
        assert sink.requests[0].keys == "k1"
    finally:
        svc.shutdown()
        cl.shutdown()


def test_schedule_topic_tags_code_is_the_delivery_time(tmp_path: Path) -> None:
    cl = CommitLog(commit_log_config(tmp_path, ts=1_000_000))
    props = props_bytes({"DELAY": "3", "REAL_TOPIC": "T"})
    rec = build_record("SCHEDULE_TOPIC_XXXX", 2, b"d", props)
    cl.append(EncodedMessage(rec, "SCHEDULE_TOPIC_XXXX", 2))
    reqs, _, _ = cl.read_dispatch_requests(0, check_crc=True)
    assert reqs[0].tags_code == 1_000_000 + 10_000
    cl.shutdown()


def test_arrivals_are_notified_before_the_index_is_built(tmp_path: Path) -> None:
    """A held pull reads only the consume queue: its wake-up does not wait for the index."""
    cl = CommitLog(commit_log_config(tmp_path))
    sink = Collector()
    svc = ReputMessageService(cl, sink, fallback_wait_ms=1000)
    seen: list[tuple[int, int]] = []  # (consume-queue units, indexed records) at each arrival
    svc.message_arriving_listener = lambda *_: seen.append((len(sink.requests), len(sink.indexed)))
    try:
        for _ in range(2):
            cl.append(
                EncodedMessage(build_record("T", 1, b"x", props_bytes({"KEYS": "k"})), "T", 1)
            )
        assert svc.do_reput() == 2
        assert seen == [(2, 0), (2, 0)]
        assert len(sink.indexed) == 2
    finally:
        cl.shutdown()


def test_a_run_with_no_one_waiting_calls_no_listener_and_the_next_one_does(
    tmp_path: Path,
) -> None:
    """``arrival_wanted`` False (no pull held, no pop parked): the run's records are still
    dispatched, and the listener is called again once someone waits."""
    cl = CommitLog(commit_log_config(tmp_path))
    sink = Collector()
    svc = ReputMessageService(cl, sink, fallback_wait_ms=1000)
    arrivals: list[int] = []
    svc.message_arriving_listener = lambda t, q, o, *_: arrivals.append(o)
    waiting = False
    svc.arrival_wanted = lambda: waiting
    try:
        for _ in range(2):
            cl.append(EncodedMessage(build_record("T", 1, b"x", props_bytes({})), "T", 1))
        assert svc.do_reput() == 2
        assert (len(sink.requests), arrivals) == (2, [])
        waiting = True
        cl.append(EncodedMessage(build_record("T", 1, b"x", props_bytes({})), "T", 1))
        assert svc.do_reput() == 1
        assert arrivals == [2]
    finally:
        cl.shutdown()
