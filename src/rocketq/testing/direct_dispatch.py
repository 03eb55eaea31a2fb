"""The direct dispatch (``dispatch_direct``: reput_run.c) against the Python round, the
reference: random commitlog records dispatched by ``ReputMessageService.do_reput`` into two
stores, one on each path, must leave the same consume queue and index bytes.

``random_records``: encoded records over a few topics and queues (queue offsets that continue,
skip ahead or repeat; prepared, committed and rolled-back transaction records; the schedule
and timer topics; TAGS, KEYS and UNIQ_KEY absent, empty, repeated or with non-ASCII and non-BMP
characters; a properties string with pairs the decoder drops). ``directly_dispatched``: the
records appended as a slave appends them (``CommitLog.append_data``) in runs of random length,
each run dispatched by ``do_reput``, into a loaded store (not started: no reput thread) with
small consume queue and index files, so both roll inside a run; the files as
``dispatch_fuzz.DispatchedFiles``. ``check_direct`` (a round of ``frame_fuzz``): both paths on
one round's records (in one round of 20; half of them with a pull held all along, so the
direct run returns its arrivals: ``dispatched_with_held``, which must tell the listener what the
Python round tells it), and ``dispatch_direct`` on mutated record bytes and made-up queue and
index fields (and an arrivals list or not), which must raise or stop, never write outside a
buffer.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import tempfile
from contextlib import suppress
from typing import Any

from rocketq.common import message_const as mc
from rocketq.common import native_record
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import encode_message
from rocketq.common.properties import encode_properties
from rocketq.common.topic import SCHEDULE_TOPIC
from rocketq.store.config import FlushDiskType, StoreConfig
from rocketq.store.format import CQ_STORE_UNIT_SIZE
from rocketq.store.message_store import MessageStore
from rocketq.store.timer.timer_hook import TIMER_TOPIC
from rocketq.testing.dispatch_fuzz import DispatchedFiles, store_files
from rocketq.testing.record_paths import record_paths

TOPICS = ("TopicA", "TopicB", "T\u00e9", SCHEDULE_TOPIC, TIMER_TOPIC)
WORDS = ("k", "key-1", "", "\u00fcber", "\U0001f600x", "polygenelubricants", "a b")
PREPARED, COMMIT, ROLLBACK = 0x4, 0x8, 0xC
COMMIT_LOG_BYTES = 1 << 20


def _words(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randrange(1, 5))]
    return (" " if rng.random() < 0.8 else "  ").join(words)


def _properties(rng: random.Random, phy: int) -> bytes:
    props: dict[str, str] = {}
    if rng.random() < 0.7:
        props[mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] = (
            f"U{phy:X}" if rng.random() < 0.9 else "\u00e9\U0001f600"
        )
    if rng.random() < 0.5:
        props[mc.PROPERTY_KEYS] = _words(rng)
    if rng.random() < 0.7:
        props[mc.PROPERTY_TAGS] = rng.choice(("TagA", "t\u00e9", "\U0001f600", "*"))
    if rng.random() < 0.3:
        props[mc.PROPERTY_DELAY_TIME_LEVEL] = str(rng.randrange(1, 19))
    raw = encode_properties(props)
    extra = rng.random()
    if extra < 0.05:  # a repeated name: the last pair wins
        raw += b"TAGS\x01again\x02"
    elif extra < 0.1:  # pairs the decoder drops: an empty value, no separator, an empty name
        raw += b"KEYS\x01\x02UNIQ_KEY\x02\x01x\x02"
    return raw


def random_records(rng: random.Random, count: int) -> list[bytes]:
    """``count`` encoded records in commitlog order from offset 0."""
    next_offset: dict[tuple[str, int], int] = {}
    phy, ts = 0, 1_700_000_000_000 + rng.randrange(10_000)
    records = []
    for _ in range(count):
        topic, queue_id = rng.choice(TOPICS), rng.randrange(3)
        offset = next_offset.get((topic, queue_id), 0)
        jump = rng.random()
        if jump < 0.04:
            offset += rng.randrange(1, 4)  # a gap the queue fills with blanks
        elif jump < 0.07:
            offset = max(0, offset - 1)  # written already: skipped
        sys_flag = rng.choice((0, 0, 0, 0, 0, PREPARED, ROLLBACK, COMMIT))
        ts += rng.choice((0, 1, 999, 1000, 65_000, -2000))
        msg = MessageExt(
            topic=topic,
            body=bytes(rng.randrange(0, 200)),
            queue_id=queue_id,
            queue_offset=offset,
            sys_flag=sys_flag,
            born_timestamp=ts - 5,
            store_timestamp=ts,
            commitlog_offset=phy,
            born_host=("127.0.0.1", 54321),
            store_host=("127.0.0.1", 10911),
        )
        record = bytes(encode_message(msg, _properties(rng, phy)))
        records.append(record)
        if sys_flag not in (PREPARED, ROLLBACK):
            next_offset[(topic, queue_id)] = max(offset + 1, next_offset.get((topic, queue_id), 0))
        phy += len(record)
    return records


def direct_config(root: str, cq_units: int = 10, slots: int = 7, entries: int = 30) -> StoreConfig:
    return dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=root,
        mapped_file_size_commit_log=COMMIT_LOG_BYTES,
        mapped_file_size_consume_queue=cq_units * CQ_STORE_UNIT_SIZE,
        max_hash_slot_num=slots,
        max_index_num=entries,
        flush_disk_type=FlushDiskType.ASYNC_FLUSH,
    )


#: what the arrival listener was told of a record (the properties read at the call)
ToldArrival = tuple[str, int, int, int, int, dict[str, str]]


def directly_dispatched(
    native: bool, records: list[bytes], cuts: list[int], **sizes: int
) -> tuple[DispatchedFiles, int]:
    """The records appended and dispatched run by run (a run ends at each of ``cuts``) into
    a fresh store on one path (the C one when ``native``); its files and where dispatch
    stands."""
    files, end, _told = dispatched_with_held(native, records, cuts, held=False, **sizes)
    return files, end


def dispatched_with_held(
    native: bool, records: list[bytes], cuts: list[int], *, held: bool = True, **sizes: int
) -> tuple[DispatchedFiles, int, list[ToldArrival]]:
    """:func:`directly_dispatched` with an arrival listener that someone waits on all along
    (``held``: a pull held, so the direct run returns its arrivals) or no listener; also what
    the listener was told, in order."""
    quiet = [logging.getLogger(f"rocketq.store.{name}") for name in ("consume_queue", "reput")]
    told: list[ToldArrival] = []
    with tempfile.TemporaryDirectory(prefix="rocketq-direct-") as root, record_paths(native):
        before = [q.disabled for q in quiet]
        for q in quiet:
            q.disabled = True  # the gaps, skips and bad records they log
        store = MessageStore(direct_config(root, **sizes))
        store.load()
        if held:
            store.message_arriving_listener = lambda t, q, o, tags, ts, props: told.append(
                (t, q, o, tags, ts, dict(props))
            )
            store.reput_service.arrival_wanted = lambda: True
        try:
            offset = start = 0
            for cut in [*cuts, len(records)]:
                data = b"".join(records[start:cut])
                start = max(start, cut)
                if data:
                    assert store.commit_log.append_data(offset, data)
                    offset += len(data)
                store.reput_service.do_reput()
            return store_files(store, root), store.reput_service.reput_from_offset, told
        finally:
            store.shutdown()
            for q, was in zip(quiet, before, strict=True):
                q.disabled = was


def random_cuts(rng: random.Random, count: int) -> list[int]:
    cuts, i = [], 0
    while i < count:
        i += rng.randrange(1, 40)
        cuts.append(i)
    return cuts


class _Fake:
    """An object with the attributes ``dispatch_direct`` reads (a queue, a file, an index)."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def _mutated(rng: random.Random, records: list[bytes]) -> bytearray:
    data = bytearray(b"".join(records))
    for _ in range(rng.randrange(0, 6)):
        if not data:
            break
        at = rng.randrange(len(data))
        data[at] = rng.choice((0, 0xFF, 0x7F, 0x80, 0x01, 0x02, 0x20, rng.randrange(256)))
    if data and rng.random() < 0.3:
        del data[rng.randrange(len(data)) :]
    return data


def _bad_calls(rng: random.Random) -> str | None:
    """``dispatch_direct`` over mutated records with made-up queues and index fields: each call
    returns or raises and writes nothing outside the buffers it was given."""
    compiled = native_record.COMPILED
    assert compiled is not None
    records = random_records(rng, rng.randrange(1, 6))
    log = _mutated(rng, records)
    cq_size = rng.choice((0, 19, 20, 40, 200))
    cq_guard = bytearray(cq_size + 64)
    cq_view = memoryview(cq_guard)[:cq_size]
    index_size = rng.choice((0, 40, 200, 400))
    index_guard = bytearray(index_size + 64)
    index_view = memoryview(index_guard)[:index_size]

    def pick(value: int) -> object:
        return rng.choice((value, value, value, -1, 0, 1 << 40, 1 << 62, 1 << 70, "x"))

    mf = _Fake(
        wrote_position=pick(rng.randrange(0, 3) * CQ_STORE_UNIT_SIZE),
        file_size=pick(cq_size),
        file_from_offset=pick(0),
        view=cq_view,
    )
    cq = _Fake(max_physic_offset=pick(-1), mapped_file_queue=_Fake(mapped_files=(mf,)))
    queues: dict[Any, Any] = {t: dict.fromkeys(range(3), cq) for t in TOPICS}
    index = _Fake(
        **{name: pick(value) for name, value in (
            ("hash_slot_num", 1), ("index_num", 3), ("begin_timestamp", 0), ("end_timestamp", 0),
            ("begin_phy_offset", 0), ("end_phy_offset", 0), ("hash_slot_count", 0),
            ("index_count", 1))}
    )  # fmt: skip
    index_arg = rng.choice((index, index, None, False))
    pos = rng.choice((0, 0, 0, -1, rng.randrange(0, len(log) + 2)))
    limit = rng.choice((len(log), len(log), len(log) + 1, rng.randrange(0, len(log) + 1)))
    stops = rng.choice(((SCHEDULE_TOPIC, TIMER_TOPIC), (), ("TopicA",), (3,)))
    with suppress(TypeError, ValueError, OverflowError, AttributeError, BufferError):
        compiled.dispatch_direct(
            log,
            pos,
            limit,
            pick(0),
            queues,
            index_arg,
            index_view,
            stops,
            rng.choice(([], None, [], ())),  # arrivals: a list, none, or not a list
        )
    cq_view.release()
    index_view.release()
    if any(cq_guard[cq_size:]) or any(index_guard[index_size:]):
        return "dispatch_direct wrote past a buffer"
    return None


#: the share of rounds that dispatch into two stores (tens of ms each)
STORE_ROUNDS = 0.05


def check_direct(rng: random.Random) -> str | None:
    """One fuzz round: the mutated-record calls and, in one round of 20, both paths on
    random records."""
    if rng.random() >= STORE_ROUNDS:
        return _bad_calls(rng)
    count = rng.randrange(1, 150)
    records = random_records(rng, count)
    cuts = random_cuts(rng, count)
    sizes = {"cq_units": rng.randrange(1, 12), "slots": rng.randrange(1, 9)}
    sizes["entries"] = rng.randrange(2, 24)
    held = rng.random() < 0.5
    python = dispatched_with_held(False, records, cuts, held=held, **sizes)
    compiled = dispatched_with_held(True, records, cuts, held=held, **sizes)
    if python[:2] != compiled[:2]:
        return f"direct dispatch of {count} records ({sizes}): C and Python files differ"
    if python[2] != compiled[2]:
        return f"direct dispatch of {count} records ({sizes}): the arrivals told differ"
    return _bad_calls(rng)
