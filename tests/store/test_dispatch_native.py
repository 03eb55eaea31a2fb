"""The dispatch in C (``dispatch_runs``, ``cq_units``, ``index_puts``: dispatch.c) against the
Python path, the reference (``ROCKETQ_NATIVE=0``): runs of DispatchRequests dispatched by
``MessageStore.dispatch_batch`` and ``dispatch_index`` leave the same consume queue and index
bytes, with files rolling inside a run, and the index answers the same queries."""

from __future__ import annotations

import dataclasses
import random
import struct
from pathlib import Path

import pytest

from rocketq.common import native_record
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.message_store import MessageStore
from rocketq.testing.dispatch_fuzz import (
    dispatch_config,
    dispatched_files,
    random_runs,
)
from rocketq.testing.record_paths import record_paths

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
]


@pytest.mark.parametrize("seed", range(6))
def test_random_runs_leave_the_same_consume_queue_and_index_bytes(seed: int) -> None:
    runs = random_runs(random.Random(seed), 300)
    python = dispatched_files(False, runs)
    compiled = dispatched_files(True, runs)
    cq, index, _fields = python
    assert len(cq) > 9  # both kinds of file rolled inside the runs
    assert len(index) > 3
    assert compiled == python


def test_a_large_run_with_default_sizes_is_byte_exact() -> None:
    runs = [[r for run in random_runs(random.Random(99), 2000) for r in run]]  # one run
    sizes = {"cq_units": 300, "slots": 5000, "entries": 20000}
    assert dispatched_files(True, runs, **sizes) == dispatched_files(False, runs, **sizes)


def _request(offset: int, phy: int, keys: str, uniq: str | None) -> DispatchRequest:
    ts = 1_700_000_000_000 + phy
    return DispatchRequest("T", 0, phy, 100, 7, ts, offset, keys, uniq, 0, 0, {})


def _queries(native: bool, root: Path) -> list[list[int]]:
    runs = [[_request(i, 100 * i, f"k{i % 5} all", f"U{i}") for i in range(j, j + 25)]
            for j in range(0, 100, 25)]  # fmt: skip
    with record_paths(native):
        store = MessageStore(dispatch_config(str(root), slots=11, entries=40))
        store.load()
        try:
            for run in runs:
                store.dispatch_batch(run)
                store.dispatch_index(run)
            index = store.index_service
            assert index is not None
            keys = ["k0", "k3", "all", "U7", "U99", "none"]
            return [index.query_offset("T", k, 64, 0, 1 << 62).phy_offsets for k in keys]
        finally:
            store.shutdown()


def test_the_index_built_in_c_answers_queries_as_the_python_one(tmp_path: Path) -> None:
    python = _queries(False, tmp_path / "python")
    assert python[0]
    assert python[2]
    assert python[3] == [700]
    assert _queries(True, tmp_path / "c") == python


def test_a_unit_that_does_not_fit_its_field_writes_nothing(tmp_path: Path) -> None:
    """A msg_size past int32 fails the run on both paths before any unit is written: a unit
    past the file's write position would pass for a real one in recovery's scan."""
    good = [_request(i, 100 * i, "", None) for i in range(3)]
    bad = dataclasses.replace(good[2], msg_size=1 << 40)
    for native in (False, True):
        with record_paths(native):
            store = MessageStore(dispatch_config(str(tmp_path / str(native)), cq_units=10))
            store.load()
            try:
                with pytest.raises((OverflowError, struct.error)):
                    store.dispatch_batch([*good[:2], bad])
                cq = store.consume_queues.find("T", 0)
                assert cq is not None
                mf = cq.mapped_file_queue.get_last_mapped_file()
                assert mf is not None
                assert mf.wrote_position == 20  # the first unit (the wrapper's) only
                assert not any(mf.view[20:])
            finally:
                store.shutdown()


def test_keys_of_separators_only_at_a_full_file_open_an_empty_file_on_both_paths() -> None:
    """KEYS of spaces only is a request with keys: at a full file the service opens the next
    one, which holds no entry, and C leaves its header as the Python path does (unwritten
    until the file is flushed). A fuzz finding."""
    runs = [[_request(0, 0, "", "U0"), _request(1, 100, "  ", None)]]
    python = dispatched_files(False, runs, entries=2)
    assert len(python[1]) == 2
    assert not any(python[1][1][:40])
    assert dispatched_files(True, runs, entries=2) == python
