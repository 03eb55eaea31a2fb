"""The dispatch's C paths (``dispatch_runs``, ``cq_units``, ``index_puts``: dispatch.c) against
the Python path, the reference: random runs of DispatchRequests dispatched into two stores, one
on each path, must leave the same consume queue and index bytes.

``random_runs``: runs of requests over a few topics and queues (queue offsets that continue,
skip ahead or repeat; prepared and rolled-back transaction records; UNIQ_KEY absent, empty or
set; KEYS with empty words, non-ASCII and non-BMP characters; store times that jump back and
forward). ``dispatched_files``: the runs dispatched by ``MessageStore.dispatch_batch`` and
``dispatch_index`` into a loaded store (not started: no reput thread) with small consume
queue and index files, so both roll inside a run; the files' bytes and the index's fields.
``check_dispatch`` (a round of ``frame_fuzz``): both paths on one round's runs (in one round
of 20), and the C entry points called with wrong arguments (bad types, positions past the
view, index fields that do not fit it), which must raise, never write or read outside the
view.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from rocketq.common import native_record
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.config import FlushDiskType, StoreConfig
from rocketq.store.format import CQ_STORE_UNIT_SIZE
from rocketq.store.message_store import MessageStore
from rocketq.testing.record_paths import record_paths

TOPICS = ("TopicA", "TopicB", "T\u00e9")
WORDS = ("k", "key-1", "", "\u00fcber", "\U0001f600x", "polygenelubricants", "a b")
PREPARED, ROLLBACK = 0x4, 0xC

#: a dispatch's files: the consume queue files' bytes by path under the store, the index
#: files' bytes in name order, and each index file's fields
DispatchedFiles = tuple[dict[str, bytes], list[bytes], list[tuple[int, ...]]]


def _keys(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return ""
    words = [rng.choice(WORDS) for _ in range(rng.randrange(1, 5))]
    return (" " if rng.random() < 0.8 else "  ").join(words)


def random_runs(rng: random.Random, count: int) -> list[list[DispatchRequest]]:
    """``count`` requests in commitlog order, cut into dispatch runs of random length."""
    next_offset: dict[tuple[str, int], int] = {}
    phy, ts = rng.randrange(0, 5000), 1_700_000_000_000 + rng.randrange(10_000)
    requests = []
    for _ in range(count):
        topic, queue_id = rng.choice(TOPICS), rng.randrange(3)
        offset = next_offset.get((topic, queue_id), 0)
        jump = rng.random()
        if jump < 0.05:
            offset += rng.randrange(1, 4)  # a gap the queue fills with blanks
        elif jump < 0.08:
            offset = max(0, offset - 1)  # written already: skipped
        sys_flag = rng.choice((0, 0, 0, 0, PREPARED, ROLLBACK, 0x8))
        size = rng.randrange(60, 400)
        ts += rng.choice((0, 1, 999, 1000, 65_000, -2000))
        uniq = rng.choice((None, "", f"U{phy:X}", f"U{phy:X}"))
        cq_offset = 0 if sys_flag in (PREPARED, ROLLBACK) else offset
        tags = rng.randrange(-(1 << 31), 1 << 31)
        keys = _keys(rng)
        requests.append(
            DispatchRequest(
                topic, queue_id, phy, size, tags, ts, cq_offset, keys, uniq, sys_flag, 0, {}
            )
        )
        if sys_flag not in (PREPARED, ROLLBACK):
            next_offset[(topic, queue_id)] = max(offset + 1, next_offset.get((topic, queue_id), 0))
        phy += size
    runs, i = [], 0
    while i < len(requests):
        j = i + rng.randrange(1, 40)
        runs.append(requests[i:j])
        i = j
    return runs


def dispatch_config(
    root: str, cq_units: int = 10, slots: int = 7, entries: int = 30
) -> StoreConfig:
    return dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=root,
        mapped_file_size_commit_log=4096,
        mapped_file_size_consume_queue=cq_units * CQ_STORE_UNIT_SIZE,
        max_hash_slot_num=slots,
        max_index_num=entries,
        flush_disk_type=FlushDiskType.ASYNC_FLUSH,
    )


def dispatched_files(
    native: bool, runs: list[list[DispatchRequest]], **sizes: int
) -> DispatchedFiles:
    """The runs dispatched into a fresh store on one path (the C one when ``native``)."""
    quiet = logging.getLogger("rocketq.store.consume_queue")  # the gaps and skips it logs
    with (
        tempfile.TemporaryDirectory(prefix="rocketq-dispatch-") as root,
        record_paths(native),
        _disabled(quiet),
    ):
        store = MessageStore(dispatch_config(root, **sizes))
        store.load()
        try:
            for run in runs:
                copies = [dataclasses.replace(r) for r in run]
                store.dispatch_batch(copies)  # the consume queues, then the index (reput.py)
                store.dispatch_index(copies)
            files = store_files(store, root)
        finally:
            store.shutdown()
    return files


def store_files(store: MessageStore, root: str) -> DispatchedFiles:
    """The consume-queue files under ``root`` by path, the index files' bytes and their
    header fields: what two dispatch paths must write alike."""
    index = store.index_service
    assert index is not None
    fields: list[tuple[int, ...]] = [
        (f.begin_timestamp, f.end_timestamp, f.begin_phy_offset, f.end_phy_offset,
         f.hash_slot_count, f.index_count)
        for f in index.index_file_list
    ]  # fmt: skip
    cq_root = Path(root) / "consumequeue"
    cq = {
        str(p.relative_to(cq_root)): p.read_bytes()
        for p in sorted(cq_root.rglob("*"))
        if p.is_file()
    }
    return cq, [bytes(f.mapped_file.view) for f in index.index_file_list], fields


@contextmanager
def _disabled(logger: logging.Logger) -> Iterator[None]:
    before = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = before


def _bad_calls(rng: random.Random) -> str | None:
    """The C entry points on wrong arguments: each call must raise (or, for a call that is
    well-formed after all, return), and write nothing outside the buffer it was given."""
    compiled = native_record.COMPILED
    assert compiled is not None
    size = rng.choice((0, 19, 20, 40, 200))
    guard = bytearray(size + 64)
    view = memoryview(guard)[:size]
    req = DispatchRequest("T", 0, 1, 10, 0, 1, 0, "k", "u", 0, 0, {})
    requests: list[Any] = [req, rng.choice((req, None, 7, "x"))]
    fake = type("F", (), {})()
    for name, value in (("hash_slot_num", 1), ("index_num", 2), ("begin_timestamp", 0),
                        ("end_timestamp", 0), ("begin_phy_offset", 0), ("end_phy_offset", 0),
                        ("hash_slot_count", 0), ("index_count", 1)):  # fmt: skip
        v = rng.choice((value, value, -1, 0, 1 << 40, 1 << 70, "x"))
        setattr(fake, name, v)
    calls = (
        lambda: compiled.cq_units(view, rng.randrange(-2, size + 2), size, requests, 0),
        lambda: compiled.cq_units(bytes(size), 0, size, requests, 0),
        lambda: compiled.cq_units(view, 0, size, requests, rng.randrange(-1, 3)),
        lambda: compiled.index_puts(fake, view, requests, 0, rng.randrange(0, 3)),
        lambda: compiled.index_puts(None, None, requests, 0, 0),
        lambda: compiled.dispatch_runs(requests),
    )
    for call in calls:
        with suppress(TypeError, ValueError, OverflowError, AttributeError, BufferError):
            call()
    view.release()
    if any(guard[size:]):
        return f"a C dispatch call wrote past a buffer of {size} bytes"
    return None


#: the share of rounds that dispatch into two stores (tens of ms each): the other checks of
#: ``frame_fuzz`` keep most of its rounds
STORE_ROUNDS = 0.05


def check_dispatch(rng: random.Random) -> str | None:
    """One fuzz round: the wrong-argument calls and, in one round of 20, both paths on
    random runs."""
    if rng.random() >= STORE_ROUNDS:
        return _bad_calls(rng)
    runs = random_runs(rng, rng.randrange(1, 120))
    sizes = {"cq_units": rng.randrange(1, 12), "slots": rng.randrange(1, 9)}
    sizes["entries"] = rng.randrange(2, 24)
    python = dispatched_files(False, runs, **sizes)
    compiled = dispatched_files(True, runs, **sizes)
    if python != compiled:
        return f"dispatch of {sum(map(len, runs))} requests ({sizes}): C and Python files differ"
    return _bad_calls(rng)
