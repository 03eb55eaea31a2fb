"""The direct dispatch (``dispatch_direct``: reput_run.c, ``MessageStore.dispatch_direct``)
against the Python round, the reference (``ROCKETQ_NATIVE=0``): the same commitlog records
leave the same consume queue and index bytes, and the arrivals a held pull waits for."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rocketq.common import native_record
from rocketq.store import FlushDiskType, MessageStore
from rocketq.testing.direct_dispatch import (
    directly_dispatched,
    dispatched_with_held,
    random_cuts,
    random_records,
)
from rocketq.testing.record_paths import record_paths
from rocketq.testing.store import new_msg, open_store

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
]

STORE_TS = 1_700_000_000_000


@pytest.mark.parametrize("seed", range(8))
def test_random_records_leave_the_same_consume_queue_and_index_bytes(seed: int) -> None:
    rng = random.Random(seed)
    records = random_records(rng, 400)
    cuts = random_cuts(rng, len(records))
    python, python_end = directly_dispatched(False, records, cuts)
    compiled, compiled_end = directly_dispatched(True, records, cuts)
    cq, index, _fields = python
    assert len(cq) > 9  # both kinds of file rolled inside the runs
    assert len(index) > 3
    assert python_end == sum(map(len, records))  # every record dispatched
    assert compiled == python
    assert compiled_end == python_end


def test_a_record_the_python_round_cannot_decode_stops_both_paths_there() -> None:
    records = random_records(random.Random(5), 40)
    bad = bytearray(records[20])
    bad[-3:] = b"\xff\xfe\x02"  # not UTF-8 in the properties: a bad record
    records[20] = bytes(bad)
    python, python_end = directly_dispatched(False, records, [10, 25])
    compiled, compiled_end = directly_dispatched(True, records, [10, 25])
    assert python_end == sum(map(len, records[:20]))
    assert (compiled, compiled_end) == (python, python_end)


Arrival = tuple[str, int, int, int, int, dict[str, str]]


def _put_and_dispatch(
    native: bool,
    root: Path,
    wanted: Callable[[], bool] | None,
    count: int,
    before_reput: Callable[[], None] = lambda: None,
) -> tuple[dict[str, bytes], list[Arrival], int]:
    """``count`` messages put through the store's put path (64 KiB commitlog files: the log
    rolls) and dispatched in runs by ``do_reput``; the consume queue bytes, the arrivals and
    how many rounds read DispatchRequests."""
    rng = random.Random(7)
    with record_paths(native):
        store = open_store(
            root, flush_disk_type=FlushDiskType.ASYNC_FLUSH, clock_ms=lambda: STORE_TS
        )
        arrivals: list[Arrival] = []
        store.message_arriving_listener = lambda t, q, o, tags, ts, props: arrivals.append(
            (t, q, o, tags, ts, dict(props))  # the properties read at the call, as a filter does
        )
        store.reput_service.arrival_wanted = wanted
        store.reput_service.shutdown()  # only do_reput below dispatches
        reads = _count_reads(store)
        try:
            for i in range(count):
                props = {"UNIQ_KEY": f"U{i:06d}", "TAGS": rng.choice(("a", "b\u00e9"))}
                if rng.random() < 0.4:
                    props["KEYS"] = rng.choice(("k1 k2", "\U0001f600", "x  y"))
                body = bytes(rng.randrange(1, 3000))
                store.put_message(new_msg(topic="T", queue_id=i % 3, body=body, properties=props))
                if rng.random() < 0.1:
                    before_reput()
                    store.reput_service.do_reput()
            before_reput()
            store.reput_service.do_reput()
            root_cq = root / "consumequeue"
            cq = {
                str(p.relative_to(root_cq)): p.read_bytes()
                for p in root_cq.rglob("*")
                if p.is_file()
            }
            return cq, arrivals, reads[0]
        finally:
            store.shutdown()


def _count_reads(store: MessageStore) -> list[int]:
    """How many times the reput's rounds decode DispatchRequests (the real method runs)."""
    reads = [0]
    read = store.commit_log.read_dispatch_requests

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads[0] += 1
        return read(*args, **kwargs)

    store.commit_log.read_dispatch_requests = counted  # type: ignore[method-assign]
    return reads


def test_puts_dispatched_directly_write_the_units_of_the_python_round(tmp_path: Path) -> None:
    python, _, _ = _put_and_dispatch(False, tmp_path / "python", lambda: False, 600)
    compiled, arrivals, reads = _put_and_dispatch(True, tmp_path / "c", lambda: False, 600)
    assert len(python) == 6  # two files a queue: the consume queues rolled
    assert compiled == python
    assert arrivals == []  # nobody waited
    # the Python round read only where C stopped: each queue's first unit and the commitlog's
    # file ends (a blank, a new file)
    assert reads <= 25  # 16 here: 14 commitlog files, 3 new queues, 3 consume queue rolls


class HeldInThirdRound:
    """A pull held from the third dispatch round on, while that round writes its units: a
    check before the writes (the direct run's) says False, every check after them True."""

    def __init__(self, checked_before_writes: bool) -> None:
        self.rounds = 0
        self.before = checked_before_writes

    def next_round(self) -> None:
        self.rounds += 1

    def wanted(self) -> bool:
        if self.rounds < 3:
            return False
        if self.before:  # the direct run's check: before its writes
            self.before = False
            return False
        return True


def test_an_arrival_wanted_after_the_units_are_written_is_notified(tmp_path: Path) -> None:
    """A pull held while a direct run writes its units: the check after the run finds it and
    every record of the run is notified, as the Python round (which checks after its writes)
    notifies them."""
    held = HeldInThirdRound(checked_before_writes=False)
    python, expected, _ = _put_and_dispatch(
        False, tmp_path / "python", held.wanted, 200, held.next_round
    )
    held = HeldInThirdRound(checked_before_writes=True)
    compiled, arrivals, _ = _put_and_dispatch(
        True, tmp_path / "c", held.wanted, 200, held.next_round
    )
    assert compiled == python
    assert not held.before  # the direct run checked before its writes
    assert 100 < len(expected) < 200  # the first two rounds' records woke nobody
    assert arrivals == expected


@pytest.mark.parametrize("seed", range(4))
def test_with_a_pull_held_the_direct_run_tells_the_python_round_s_arrivals(seed: int) -> None:
    """Random records (transaction records, the schedule and timer topics, skips and gaps,
    keys and tags in any shape) dispatched while a pull is held all along: the same files,
    reput offset and arrivals (topic, queue, offset, tags code, store time, properties)."""
    rng = random.Random(100 + seed)
    records = random_records(rng, 400)
    cuts = random_cuts(rng, len(records))
    python = dispatched_with_held(False, records, cuts)
    compiled = dispatched_with_held(True, records, cuts)
    assert len(python[2]) > 200  # most records have a unit, each told
    assert compiled == python


def test_with_a_pull_held_puts_are_dispatched_by_the_direct_run(tmp_path: Path) -> None:
    python, expected, _ = _put_and_dispatch(False, tmp_path / "python", lambda: True, 600)
    compiled, arrivals, reads = _put_and_dispatch(True, tmp_path / "c", lambda: True, 600)
    assert compiled == python
    assert len(expected) == 600
    assert arrivals == expected
    assert reads <= 25  # the Python round read only where C stops, as with nobody held
