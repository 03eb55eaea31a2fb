"""The fault suite's count of re-consumption: a rewind to a new master's lower offset counts
what will be consumed again and the seconds of consumption that spans, leaving out the time
the consumer waited on a broker (a paused master, a killed or fenced one refusing its pulls);
a rewind to the end counts nothing, and a replayed batch is consumed anew."""

from __future__ import annotations

import time

from rocketq.testing.failover.reconsume import ConsumptionClock, QueueCursor


def test_a_rewind_below_what_was_consumed_counts_the_messages_and_the_replayed_time() -> None:
    cursor = QueueCursor()
    cursor.consumed(0, 10, 100.0, 0.0)
    cursor.consumed(10, 20, 101.5, 1.5)
    rewind = cursor.rewind("broker-a", "cg", 2, 12)
    assert (rewind.count, rewind.queue_id, cursor.offset, cursor.end) == (8, 2, 12, 12)
    assert (rewind.committed, rewind.end) == (12, 20)
    assert rewind.replay_s == 0.0  # only part of the last batch: no time spanned
    cursor.consumed(12, 20, 103.0, 3.0)
    again = cursor.rewind("broker-a", "cg", 2, 5)
    assert again.count == 15
    assert again.replay_s == 3.0  # from the batch holding offset 5 to the last one
    assert again.wall_s == 3.0
    assert [offset for offset, _ in again.batches] == [0, 10, 12]


def test_the_time_a_paused_master_kept_the_consumer_waiting_is_not_replayed_consumption() -> None:
    # RELIABILITY.md's SIGSTOP case: queue 1 consumed for 0.3 s, then the master paused; the
    # consumer's pulls of the other queues timed out (3 s each), and queue 1's pull, pending
    # since before the new master was named, was answered by the old master as it woke 5 s on
    clock = ConsumptionClock()
    q1 = QueueCursor()
    q1.consumed(276, 280, 100.0, clock.pulled(100.0, 100.0, answered=True))
    assert abs(clock.pulled(100.0, 100.2, answered=True) - 0.2) < 1e-9  # nothing new
    q1.consumed(280, 283, 100.3, clock.pulled(100.29, 100.3, answered=True))
    assert abs(clock.pulled(100.3, 103.3, answered=False) - 0.3) < 1e-9  # queue 2: timed out
    woken = clock.pulled(103.3, 105.34, answered=True)  # answered after 2 s: a wait
    assert abs(woken - 0.3) < 1e-9
    q1.consumed(283, 284, 105.34, woken)
    rewind = q1.rewind("broker-b", "cg", 1, 276)
    assert (rewind.committed, rewind.end, rewind.count) == (276, 284, 8)
    assert abs(rewind.wall_s - 5.34) < 1e-9  # the pause included (the runner printed 5.40 s)
    assert abs(rewind.replay_s - 0.3) < 1e-9  # consumption replayed: 0.3 s
    assert [offset for offset, _ in rewind.batches] == [276, 280, 283]


def test_the_clock_counts_idle_time_and_answered_pulls_between_them() -> None:
    clock = ConsumptionClock()
    ticks = [
        clock.pulled(10.0, 10.01, answered=True),  # the first pull: its own round trip
        clock.pulled(10.11, 10.12, answered=True),  # 0.1 s idle, then a pull
        clock.pulled(10.12, 10.5, answered=False),  # refused: left out
        clock.pulled(10.6, 10.61, answered=True),  # ends the wait: the broker serves again
        clock.pulled(10.71, 10.72, answered=True),  # 0.1 s idle, then a pull
    ]
    assert [round(t, 9) for t in ticks] == [0.01, 0.12, 0.12, 0.12, 0.23]


def test_the_time_a_killed_master_refused_every_pull_is_not_replayed_consumption() -> None:
    # RELIABILITY.md, "Re-consumption past 2 s after a paused master": queue 0 consumed 809..812,
    # then its master was killed; the consumer's pulls were refused every 0.1 s for 6.8 s
    # (down, then fenced) until the restarted master answered again and 813..818 were
    # consumed; the master, paused then, handed its slave 809 (its slave had taken the
    # offsets 0.5 s before), and the rewind to 809 replays 0.49 s of consumption, not 7.35 s
    clock = ConsumptionClock()
    q0 = QueueCursor()
    q0.consumed(809, 813, 52.3, clock.pulled(52.29, 52.3, answered=True))
    t = 52.4
    while t < 59.2:
        clock.pulled(t, t + 0.001, answered=False)  # connection refused, then fenced
        t += 0.1
    q0.consumed(813, 815, 59.26, clock.pulled(59.25, 59.26, answered=True))
    q0.consumed(815, 819, 59.65, clock.pulled(59.26, 59.65, answered=True))
    rewind = q0.rewind("broker-b", "FaultsConsumer0", 0, 809)
    assert (rewind.count, rewind.end) == (10, 819)
    assert abs(rewind.wall_s - 7.35) < 1e-9
    assert abs(rewind.replay_s - 0.49) < 1e-6  # 0.1 s before the kill, 0.39 s after restart


def test_the_pull_a_paused_master_answers_as_it_wakes_is_a_wait_not_consumption() -> None:
    # the e2e sample's stop_master rewinds (RELIABILITY.md, the same section): five batches
    # consumed in 0.42 s before the pause; the next pull timed out after 3 s, and the one after
    # it was answered 0.95 s later as the master woke (under SLOW_PULL_S): 1.47 s was counted
    clock = ConsumptionClock()
    q1 = QueueCursor()
    for i, first in enumerate((838, 839, 842, 843, 846)):  # a batch every 0.105 s
        sent = 100.0 + 0.105 * i
        q1.consumed(first, first + 1, sent + 0.01, clock.pulled(sent, sent + 0.01, True))
    assert abs(clock.pulled(100.53, 103.53, answered=False) - 0.53) < 1e-9  # 0.1 s idle first
    q1.consumed(847, 848, 104.48, clock.pulled(103.53, 104.48, answered=True))
    rewind = q1.rewind("broker-b", "FaultsConsumer0", 1, 838)
    assert (rewind.count, round(rewind.wall_s, 9)) == (10, 4.47)
    assert abs(rewind.replay_s - 0.52) < 1e-9  # the batches' 0.42 s, the 0.1 s idle after them


def test_a_rewind_to_the_end_of_what_was_consumed_counts_nothing() -> None:
    cursor = QueueCursor()
    cursor.consumed(0, 4)
    cursor.committed(4, time.monotonic())
    before = time.monotonic()
    rewind = cursor.rewind("broker-b", "cg", 0, 4)
    assert rewind.count == 0
    assert [offset for offset, _ in rewind.commits] == [4]  # the commits the detail prints
    assert not cursor.commits  # the next master's commits are its own
    assert rewind.at >= before
    assert (cursor.offset, cursor.end, len(cursor.batches)) == (4, 4, 1)


def test_the_time_the_group_had_no_master_to_pull_from_is_not_replayed_consumption() -> None:
    # RELIABILITY.md, "Re-consumption past 2 s after a paused master": a master alone in its
    # in-sync set answered the commit of 1119 and was killed before persisting it; for 2.96 s
    # the route named no master, so no pull was sent; restarted at its address it answered
    # 1119..1120 and was paused; its slave took its restarted offsets (1116): the rewind to
    # 1116 replays the 0.01 s of consumption around those two batches, not the 2.96 s between
    clock = ConsumptionClock()
    q3 = QueueCursor()
    q3.consumed(1116, 1119, 7.50, clock.pulled(7.49, 7.50, answered=True))
    t = 7.6
    while t < 10.4:
        clock.unreachable(t)  # no master in the route: nothing sent
        t += 0.1
    q3.consumed(1119, 1120, 10.46, clock.pulled(10.45, 10.46, answered=True))
    rewind = q3.rewind("broker-b", "FaultsConsumer1", 3, 1116)
    assert (rewind.count, rewind.end) == (4, 1120)
    assert rewind.replay_s < 0.2  # 0.1 s idle before the kill; 2.83 s before this change
