"""PopInflightTable: one live handle per message; a replaced handle stays refused until every
handle of the message has ended; acks are idempotent with the live handle. A pop is kept as
one span with a bitmap of its acks; the spans answer every sequence of calls as one entry per
offset does (``ReferenceTable``, Hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_a_pop_is_one_span_and_its_acks_set_bits() -> None:
    t = PopInflightTable()
    t.on_pop("g", "T", 0, list(range(10, 42)), pop_time=100, ends_ms=1100)
    assert t.on_ack("g", "T", 0, list(range(10, 42)), 100, "ck", 1100, start=10) == (
        list(range(10, 42)),
        [],
    )
    assert t.on_ack("g", "T", 0, [11, 12], 100, "ck", 1100, start=10) == ([], [11, 12])
    assert t.on_ack("g", "T", 0, [11], 99, "ck", 1100, start=10) == ([], [])  # not its handle
    assert t.live_count == 32
    t.expire(now_ms=1101)
    assert t.live_count == 0


def test_a_change_inside_a_span_leaves_the_other_offsets_to_their_pop() -> None:
    t = PopInflightTable()
    t.on_pop("g", "T", 0, [5, 6, 7, 8], pop_time=100, ends_ms=1100)
    assert t.replace(KEY, 100, 200, 500)  # offset 7
    assert t.on_ack("g", "T", 0, [5, 6, 7, 8], 100, "ck", 1100, start=5) == ([5, 6, 8], [])
    assert t.on_ack("g", "T", 0, [7], 200, "ck2", 500, start=7) == ([7], [])


def test_a_pop_over_offsets_in_flight_makes_the_older_handle_stale() -> None:
    t = PopInflightTable()
    t.on_pop("g", "T", 0, [5, 6, 7], pop_time=100, ends_ms=1100)
    t.on_pop("g", "T", 0, [6, 7, 8], pop_time=200, ends_ms=1200)  # after an offset reset
    assert t.on_ack("g", "T", 0, [5, 6, 7], 100, "ck", 1100, start=5) == ([5], [])
    assert t.on_ack("g", "T", 0, [6, 7, 8], 200, "ck2", 1200, start=6) == ([6, 7, 8], [])


class ReferenceTable:
    """The table's rules, one entry per offset (the model the spans must agree with)."""

    def __init__(self) -> None:
        self.handles: dict[tuple[int, int], tuple[int, int, bool]] = {}
        self.acked: dict[str, set[int]] = {}

    def on_pop(self, q: int, offsets: list[int], pop_time: int, ends: int) -> None:
        for o in offsets:
            old = self.handles.get((q, o))
            self.handles[(q, o)] = (pop_time, ends if old is None else max(old[1], ends), False)

    def replace(self, q: int, o: int, old_pop_time: int, pop_time: int, ends: int) -> bool:
        h = self.handles.get((q, o))
        if h is not None and (h[0] != old_pop_time or h[2]):
            return False
        self.handles[(q, o)] = (pop_time, ends if h is None else max(h[1], ends), False)
        return True

    def undo_replace(self, q: int, o: int, old_pop_time: int, pop_time: int) -> None:
        h = self.handles.get((q, o))
        if h is not None and h[0] == pop_time:
            self.handles[(q, o)] = (old_pop_time, h[1], h[2])

    def on_ack(
        self, q: int, offsets: list[int], pop_time: int, key: str, ends: int
    ) -> tuple[list[int], list[int]]:
        fresh, repeated = [], []
        for o in offsets:
            h = self.handles.get((q, o))
            if h is None:
                self.handles[(q, o)] = (pop_time, ends, True)
            elif h[0] != pop_time:
                continue
            elif h[2]:
                repeated.append(o)
                continue
            else:
                self.handles[(q, o)] = (h[0], h[1], True)
            fresh.append(o)
        self.acked.setdefault(key, set()).update(fresh)
        return fresh, repeated

    def undo_ack(self, q: int, offsets: list[int], key: str) -> None:
        for o in offsets:
            h = self.handles.get((q, o))
            if h is not None and h[2]:
                self.handles[(q, o)] = (h[0], h[1], False)
        self.acked.get(key, set()).difference_update(offsets)

    def expire(self, now: int) -> None:
        self.handles = {k: h for k, h in self.handles.items() if h[1] >= now}


OFFSETS = st.lists(st.integers(0, 24), min_size=1, max_size=8, unique=True)
OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("pop"), st.integers(0, 1), st.integers(0, 24), st.integers(1, 8), st.booleans()
        ),
        st.tuples(st.just("ack"), st.integers(0, 1), OFFSETS, st.integers(0, 9), st.booleans()),
        st.tuples(st.just("replace"), st.integers(0, 1), st.integers(0, 24), st.integers(0, 9)),
        st.tuples(st.just("undo"), st.integers(0, 1), OFFSETS, st.integers(0, 9)),
        st.tuples(st.just("expire"), st.integers(0, 3000)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_the_spans_answer_as_one_entry_per_offset_would(ops: list[tuple[Any, ...]]) -> None:
    t, ref = PopInflightTable(), ReferenceTable()
    pops: list[tuple[int, list[int], int, int]] = []  # (queue, offsets, pop time, ends)
    clock = 1000
    for op in ops:
        clock += 10
        if op[0] == "pop":
            _, q, start, n, gap = op
            offsets = list(range(start, start + 2 * n, 2 if gap else 1))[:n]
            t.on_pop("g", "T", q, offsets, clock, clock + 500)
            ref.on_pop(q, offsets, clock, clock + 500)
            pops.append((q, offsets, clock, clock + 500))
        elif op[0] in ("ack", "undo") and pops:
            _, _, offsets, i, *flag = op
            pq, popped, pop_time, ends = pops[i % len(pops)]
            if i % 2:  # the pop's own offsets, as a client acks them
                offsets = popped
            key = f"ck{pq}-{popped[0]}-{pop_time}"
            if op[0] == "ack":
                start = popped[0] if flag[0] else None
                got = t.on_ack("g", "T", pq, offsets, pop_time, key, ends, start)
                assert got == ref.on_ack(pq, offsets, pop_time, key, ends)
            else:
                t.undo_ack("g", "T", pq, offsets, key)
                ref.undo_ack(pq, offsets, key)
            assert t.acked_offsets(key) == ref.acked.get(key, set())
        elif op[0] == "replace" and pops:
            _, q, offset, i = op
            old = pops[i % len(pops)][2]
            done = t.replace(("g", "T", q, offset), old, clock, clock + 300)
            assert done == ref.replace(q, offset, old, clock, clock + 300)
            if done and i % 3 == 0:
                t.undo_replace(("g", "T", q, offset), old, clock)
                ref.undo_replace(q, offset, old, clock)
        elif op[0] == "expire":
            t.expire(op[1])
            ref.expire(op[1])
        assert t.live_count == len(ref.handles)
