"""TimerMessageStore on a real store with a hand-moved clock (StoreConfig.clock_ms): a timer is
put to its topic in the first tick at or after its delivery time and not before, through a
clean restart, past the roll window and after a recall's delete marker; recovery cuts a torn
timerlog unit; a restart from a stale checkpoint (what a kill -9 leaves) puts no second copy;
timers due within a tenth of the precision of each other go out in one put; an idle timer
sleeps (its threads wait for their next slot, a put into the wheel topic wakes the enqueue, a
flush with nothing new writes neither the wheel nor the metrics file)."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections import Counter
from pathlib import Path

from rocketq.common import message_const as mc
from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore
from rocketq.store.config import BrokerRole
from rocketq.store.timer.timer_checkpoint import TimerCheckpoint
from rocketq.store.timer.timer_hook import TIMER_TOPIC, build_delete_key
from rocketq.store.timer.timer_log import UNIT_SIZE
from rocketq.store.timer.timer_message_store import (
    TimerMessageStore,
    timer_check_path,
    timer_metrics_path,
)
from rocketq.testing.store import new_msg, small_store_config
from rocketq.testing.wait import until_sync

T0 = 1_800_000_000_000
PRECISION = 100
TOPIC = "Orders"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


def open_timer_store(root: Path, clock: Clock, **overrides: object) -> MessageStore:
    config = dataclasses.replace(
        small_store_config(root, timer_precision_ms=PRECISION, **overrides), clock_ms=clock
    )
    store = MessageStore(config)
    store.load()
    store.start()
    return store


def timer(store: MessageStore) -> TimerMessageStore:
    assert store.timer_message_store is not None
    return store.timer_message_store


def put_timer(store: MessageStore, key: str, deliver_ms: int, queue_id: int = 0) -> None:
    msg = new_msg(TOPIC, queue_id, key.encode(), {mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: key})
    msg.properties[mc.PROPERTY_TIMER_DELIVER_MS] = str(deliver_ms)
    assert timer(store).transform(msg) is None
    assert msg.topic == TIMER_TOPIC
    assert store.put_message(msg).is_ok


def delivered(store: MessageStore, topic: str = TOPIC, queue_id: int = 0) -> list[tuple[str, int]]:
    """(UNIQ_KEY, store time) of the copies in the target queue."""
    store.wait_for_dispatch()
    result = store.get_message("t", topic, queue_id, 0, 1000)
    out = []
    for data in result.message_buffers:
        msg = decode_message(data, check_crc=False)
        out.append((msg.properties[mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX], msg.store_timestamp))
    return out


def enqueued(store: MessageStore, count: int) -> bool:
    return until_sync(lambda: timer(store).curr_queue_offset >= count, 10)


def wheel_enqueued(store: MessageStore) -> bool:
    """Whether the timer enqueued every copy put into the wheel topic (a rolled copy included):
    the clock may move on only then, or a copy enqueued late rolls fewer times."""
    store.wait_for_dispatch()
    return timer(store).curr_queue_offset >= store.get_max_offset_in_queue(TIMER_TOPIC, 0)


def advance(store: MessageStore, clock: Clock, to_ms: int, expect: int) -> list[tuple[str, int]]:
    """Move the clock to ``to_ms`` and wait for ``expect`` copies in the target."""
    clock.now = to_ms
    assert until_sync(lambda: timer(store).curr_read_time_ms >= to_ms // PRECISION * PRECISION, 10)
    assert until_sync(lambda: len(delivered(store)) >= expect, 10)
    return delivered(store)


def test_a_timer_arrives_in_the_first_tick_at_or_after_its_time(tmp_path: Path) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    try:
        put_timer(store, "exact", T0 + 1000)  # slot T0+900: fires once now >= T0+1000
        put_timer(store, "inside", T0 + 1050)  # slot T0+1000: fires once now >= T0+1100
        assert enqueued(store, 2)
        clock.now = T0 + 999
        assert until_sync(lambda: timer(store).curr_read_time_ms == T0 + 900, 10)
        assert delivered(store) == []  # never early
        assert [k for k, _ in advance(store, clock, T0 + 1000, 1)] == ["exact"]
        assert [k for k, _ in advance(store, clock, T0 + 1099, 1)] == ["exact"]
        copies = advance(store, clock, T0 + 1100, 2)
        assert copies == [("exact", T0 + 1000), ("inside", T0 + 1100)]
        assert dict(timer(store).timing_count) == {}
        assert timer(store).dequeue_total[TOPIC] == 2
    finally:
        store.shutdown()


def test_timers_pending_at_a_clean_restart_arrive_once(tmp_path: Path) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    for i in range(5):
        put_timer(store, f"k{i}", T0 + 500 + 300 * i)
    assert enqueued(store, 5)
    advance(store, clock, T0 + 800, 2)
    store.shutdown()
    store = open_timer_store(tmp_path, clock)
    try:
        assert dict(timer(store).timing_count) == {TOPIC: 3}  # timermetrics came back
        copies = advance(store, clock, T0 + 2000, 5)
        assert sorted(k for k, _ in copies) == [f"k{i}" for i in range(5)]
        assert all(ts >= T0 + 500 + 300 * int(k[1:]) for k, ts in copies)
    finally:
        store.shutdown()


def test_a_timer_past_the_roll_window_hops_through_the_wheel_topic(tmp_path: Path) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock, timer_roll_window_slot=10)  # a 1 s window
    try:
        put_timer(store, "far", T0 + 3000)
        assert enqueued(store, 1)
        for step in range(T0 + 500, T0 + 3000, 500):
            clock.now = step
            assert until_sync(lambda s=step: timer(store).curr_read_time_ms >= s, 10)
            assert until_sync(lambda: wheel_enqueued(store), 10)
        assert delivered(store) == []
        assert store.get_max_offset_in_queue(TIMER_TOPIC, 0) >= 2  # it hopped already
        copies = advance(store, clock, T0 + 3000, 1)
        assert copies == [("far", T0 + 3000)]
        hops = store.get_max_offset_in_queue(TIMER_TOPIC, 0) - 1
        assert hops >= 2  # rolled copies went back into the wheel topic
        result = store.get_message("t", TOPIC, 0, 0, 1)
        rolled = decode_message(result.message_buffers[0], check_crc=False)
        assert int(rolled.properties[mc.PROPERTY_TIMER_ROLL_TIMES]) == hops
    finally:
        store.shutdown()


def test_a_delete_marker_in_the_same_slot_takes_the_timer_back(tmp_path: Path) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    try:
        put_timer(store, "gone", T0 + 1000)
        put_timer(store, "stays", T0 + 1000)
        marker = new_msg(TOPIC, 0, b"0", {mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: "gone"})
        marker.properties[mc.PROPERTY_TIMER_DELIVER_MS] = str(T0 + 901)  # the handle's time
        marker.properties[mc.PROPERTY_TIMER_DEL_UNIQKEY] = build_delete_key(TOPIC, "gone")
        assert timer(store).transform(marker) is None
        assert store.put_message(marker).is_ok
        assert enqueued(store, 3)
        assert dict(timer(store).timing_count) == {TOPIC: 1}
        copies = advance(store, clock, T0 + 1000, 1)
        clock.now = T0 + 1500
        assert until_sync(lambda: timer(store).curr_read_time_ms >= T0 + 1500, 10)
        assert [k for k, _ in delivered(store)] == ["stays"] == [k for k, _ in copies]
    finally:
        store.shutdown()


def test_recovery_cuts_a_torn_timer_log_unit_and_keeps_the_rest(tmp_path: Path) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    put_timer(store, "a", T0 + 1000)
    put_timer(store, "b", T0 + 1100)
    assert enqueued(store, 2)
    store.shutdown()
    log_file = tmp_path / "timerlog" / "00000000000000000000"
    with log_file.open("r+b") as f:
        f.seek(2 * UNIT_SIZE)
        f.write(b"\x00\x00\x00\x34" + b"\xff" * 20)  # half a unit, a bad magic
    store = open_timer_store(tmp_path, clock)
    try:
        assert timer(store).timer_log.mapped_file_queue.get_max_offset() == 2 * UNIT_SIZE
        with log_file.open("rb") as f:
            f.seek(2 * UNIT_SIZE)
            assert f.read(24) == bytes(24)  # the cut tail is zeroed
        copies = advance(store, clock, T0 + 1200, 2)
        assert sorted(k for k, _ in copies) == ["a", "b"]
    finally:
        store.shutdown()


def test_a_restart_from_a_stale_checkpoint_puts_no_second_copy(tmp_path: Path) -> None:
    """What a kill -9 leaves: the slots and the wheel-topic messages since the last
    checkpoint are handled again after the restart; the target already holds their copies."""
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    put_timer(store, "due-early", T0 + 300)
    put_timer(store, "due-late", T0 + 700)
    assert enqueued(store, 2)
    clock.now = T0 + 250
    assert until_sync(lambda: timer(store).curr_read_time_ms >= T0 + 200, 10)
    # a wheel-topic message whose slot has passed (it waited out a downtime): put at once
    late = new_msg(TIMER_TOPIC, 0, b"past", {mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: "past"})
    late.properties.update(
        {mc.PROPERTY_TIMER_OUT_MS: str(T0 - 5000), mc.PROPERTY_REAL_TOPIC: TOPIC, "REAL_QID": "0"}
    )
    assert store.put_message(late).is_ok
    assert enqueued(store, 3)
    advance(store, clock, T0 + 1000, 3)
    store.shutdown()
    cp = TimerCheckpoint(timer_check_path(str(tmp_path)))
    cp.last_read_time_ms = T0  # as of before all three deliveries
    cp.last_timer_queue_offset = cp.master_timer_queue_offset = 0
    cp.last_timer_log_flush_pos = 0
    cp.shutdown()
    os.unlink(tmp_path / "config" / "timermetrics")
    store = open_timer_store(tmp_path, clock)
    try:
        clock.now = T0 + 2000
        assert until_sync(lambda: timer(store).curr_read_time_ms >= T0 + 2000, 10)
        assert until_sync(lambda: timer(store).curr_queue_offset >= 3, 10)
        counts = Counter(k for k, _ in delivered(store))
        assert counts == {"due-early": 1, "due-late": 1, "past": 1}
        assert timer(store).marks is None  # the window closed once past the restart
    finally:
        store.shutdown()


def test_timers_added_to_a_slot_after_it_was_read_ahead_are_not_missed(tmp_path: Path) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    try:
        put_timer(store, "recalled", T0 + 1000)  # slot T0+900
        assert enqueued(store, 1)
        clock.now = T0 + 850  # the tick before slot T0+900: it is read ahead
        ahead = lambda: timer(store).dequeuer.ahead  # noqa: E731
        assert until_sync(lambda: (a := ahead()) is not None and len(a.normals) == 1, 10)
        put_timer(store, "late", T0 + 950)  # same slot, after the read ahead
        marker = new_msg(TOPIC, 0, b"0", {mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: "recalled"})
        marker.properties[mc.PROPERTY_TIMER_DELIVER_MS] = str(T0 + 901)
        marker.properties[mc.PROPERTY_TIMER_DEL_UNIQKEY] = build_delete_key(TOPIC, "recalled")
        assert timer(store).transform(marker) is None
        assert store.put_message(marker).is_ok
        assert enqueued(store, 3)
        assert [k for k, _ in advance(store, clock, T0 + 1000, 1)] == ["late"]
        clock.now = T0 + 1500
        assert until_sync(lambda: timer(store).curr_read_time_ms >= T0 + 1500, 10)
        assert [k for k, _ in delivered(store)] == ["late"]
    finally:
        store.shutdown()


def test_timers_due_within_a_tenth_of_the_precision_are_put_together_at_the_last(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    try:
        for key, due in (("a", T0 + 1001), ("b", T0 + 1004), ("c", T0 + 1008)):
            put_timer(store, key, due)  # slot T0+1000; the batch window is 10 ms
        assert enqueued(store, 3)
        clock.now = T0 + 1004  # "a" and "b" are due, "c" is due within the window
        assert until_sync(lambda: timer(store).started_until >= T0 + 1100, 10)
        # one put for the batch once its last is due: none before (a bounded look, no event
        # says "nothing was put")
        assert not until_sync(lambda: len(delivered(store)) > 0, 1.0)
        copies = advance(store, clock, T0 + 1008, 3)
        assert copies == [("a", T0 + 1008), ("b", T0 + 1008), ("c", T0 + 1008)]
    finally:
        store.shutdown()


def test_a_promoted_store_puts_no_second_copy_of_what_waits_beyond_its_confirm_offset(
    tmp_path: Path,
) -> None:
    """A promoted master (controller mode) dispatches only up to the confirm offset: the old
    master's last copies, and a wheel-topic message with its copy, may wait undispatched in
    the commitlog until the in-sync set acknowledges them. The new timer must not put them
    again: neither the timer whose wheel message is in the queue, nor the one found later."""
    clock = Clock()
    store = open_timer_store(tmp_path, clock, broker_role=BrokerRole.SLAVE)
    try:
        assert not timer(store).is_running
        store.set_role_only(BrokerRole.SYNC_MASTER)  # puts taken; the timer not yet switched
        put_timer(store, "in-queue", T0 + 300)
        assert store.wait_for_dispatch()
        bound = [store.get_max_phy_offset()]
        store.reput_service.dispatch_bound = lambda: bound[0]
        clock.now = T0 + 300
        put_copy(store, "in-queue")  # the old master's copy, not yet confirmed
        put_timer(store, "in-tail", T0 + 400)
        clock.now = T0 + 400
        put_copy(store, "in-tail")
        clock.now = T0 + 1000
        store.switch_timer_for_role()  # the promotion
        assert until_sync(lambda: timer(store).curr_queue_offset >= 1, 10)
        clock.now = T0 + 2000
        assert until_sync(lambda: timer(store).curr_read_time_ms >= T0 + 2000, 10)
        bound[0] = 1 << 62  # the in-sync set caught up
        assert until_sync(lambda: timer(store).curr_queue_offset >= 2, 10)
        clock.now = T0 + 3000
        assert until_sync(lambda: timer(store).curr_read_time_ms >= T0 + 3000, 10)
        counts = Counter(k for k, _ in delivered(store))
        assert counts == {"in-queue": 1, "in-tail": 1}
        assert timer(store).marks is None  # closed once dispatch passed the tail
    finally:
        store.shutdown()


def put_copy(store: MessageStore, key: str) -> None:
    """A copy as the timer puts it (TIMER_DEQUEUE_MS and the UNIQ_KEY)."""
    props = {
        mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: key,
        mc.PROPERTY_TIMER_DEQUEUE_MS: str(store.now_ms()),
    }
    assert store.put_message(new_msg(TOPIC, 0, key.encode(), props)).is_ok


def test_a_zeroed_checkpoint_over_an_empty_log_starts_reading_now(tmp_path: Path) -> None:
    """A slave killed before its first promotion leaves ``timercheck`` created but never
    written: promoted later, its timer reads from now, not a lap of empty slots back (a walk
    that delayed every pending timer by seconds)."""
    TimerCheckpoint(timer_check_path(str(tmp_path))).shutdown()  # the file, all zeros
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    try:
        assert timer(store).curr_read_time_ms >= T0 - PRECISION
        put_timer(store, "soon", T0 + 300)
        assert enqueued(store, 1)
        assert [k for k, _ in advance(store, clock, T0 + 400, 1)] == ["soon"]
    finally:
        store.shutdown()


def voluntary_switches(name: str) -> int:
    thread = next(t for t in threading.enumerate() if t.name == name)
    with open(f"/proc/self/task/{thread.native_id}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches line")


def test_idle_enqueue_and_dequeue_threads_wait_for_their_next_slot(tmp_path: Path) -> None:
    store = open_timer_store(tmp_path, Clock())  # precision 100: Java's poll is 10 ms
    try:
        names = ("TimerEnqueueService", "TimerDequeueService")
        before = {name: voluntary_switches(name) for name in names}
        time.sleep(0.5)  # a measuring window: the threads' wake-ups in it
        woken = {name: voluntary_switches(name) - before[name] for name in names}
        assert all(count <= 12 for count in woken.values()), woken  # polling: ~50 each
    finally:
        store.shutdown()


def test_a_message_dispatched_into_the_wheel_topic_wakes_the_enqueue(tmp_path: Path) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    try:
        service = timer(store).enqueue_service
        service.idle_wait_ms = lambda: 60_000  # only a wake-up enqueues within the deadline
        service.wakeup()  # into the long wait
        put_timer(store, "woken", T0 + 5000)
        assert until_sync(lambda: timer(store).curr_queue_offset >= 1, 10)
        assert timer(store).timing_count[TOPIC] == 1  # in the wheel
    finally:
        store.shutdown()


def test_a_flush_with_nothing_new_writes_no_metrics_file_and_syncs_no_wheel(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = open_timer_store(tmp_path, clock)
    try:
        t = timer(store)
        t.flush_service.shutdown()  # the test flushes by hand
        path = timer_metrics_path(str(tmp_path))
        t.flush()
        first = os.stat(path).st_ino
        assert not t.timer_wheel._dirty
        t.flush()
        assert os.stat(path).st_ino == first  # not rewritten (a rename gives a new inode)
        put_timer(store, "counted", T0 + 5000)
        assert until_sync(lambda: t.timing_count[TOPIC] == 1, 10)
        t.flush()
        assert os.stat(path).st_ino != first  # the count changed: written
        assert not t.timer_wheel._dirty  # the slot written by the enqueue was synced
    finally:
        store.shutdown()
