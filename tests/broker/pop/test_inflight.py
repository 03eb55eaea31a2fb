"""PopInflightTable: one live handle per message; a replaced handle stays refused until every
handle of the message has ended; acks are idempotent with the live handle."""

from __future__ import annotations

from rocketq.broker.pop.inflight import PopInflightTable

KEY = ("g", "T", 0, 7)


def test_pop_then_ack_with_the_live_handle() -> None:
    t = PopInflightTable()
    t.on_pop("g", "T", 0, [7, 8], pop_time=100, ends_ms=1100)
    assert t.on_ack("g", "T", 0, [7], 100, "ck", 1100) == ([7], [])
    assert t.on_ack("g", "T", 0, [7], 100, "ck", 1100) == ([], [7])  # repeated: still fine
    assert t.on_ack("g", "T", 0, [8], 99, "ck", 1100) == ([], [])  # not its handle
    assert t.acked_offsets("ck") == {7}


def test_a_change_replaces_the_handle_and_the_old_one_stays_refused() -> None:
    t = PopInflightTable()
    t.on_pop("g", "T", 0, [7], pop_time=100, ends_ms=1100)
    assert t.replace(KEY, 100, 200, 500)
    assert not t.replace(KEY, 100, 300, 600)  # the old handle again
    assert t.on_ack("g", "T", 0, [7], 100, "old", 1100) == ([], [])
    t.expire(now_ms=800)  # the new handle ended, the old one (1100) not yet
    assert t.on_ack("g", "T", 0, [7], 100, "old", 1100) == ([], [])
    t.expire(now_ms=1200)  # every handle ended: the entry goes
    assert t.live_count == 0


def test_an_acked_message_cannot_be_changed_and_an_unknown_one_is_taken_at_its_word() -> None:
    t = PopInflightTable()
    t.on_pop("g", "T", 0, [7], pop_time=100, ends_ms=1100)
    t.on_ack("g", "T", 0, [7], 100, "ck", 1100)
    assert not t.replace(KEY, 100, 200, 500)
    # popped before a restart: the table does not know it
    assert t.on_ack("g", "T", 1, [3], 50, "ck2", 1050) == ([3], [])
    assert t.replace(("g", "T", 1, 4), 50, 60, 900)


def test_a_failed_change_is_undone() -> None:
    t = PopInflightTable()
    t.on_pop("g", "T", 0, [7], pop_time=100, ends_ms=1100)
    assert t.replace(KEY, 100, 200, 500)
    t.undo_replace(KEY, 100, 200)
    assert t.on_ack("g", "T", 0, [7], 100, "ck", 1100) == ([7], [])
    t.mark_acked("x", 1)
    t.unmark_acked("x", 1)
    assert t.acked_offsets("x") == set()
    t.forget_checkpoint("ck")
    assert t.acked_offsets("ck") == set()
