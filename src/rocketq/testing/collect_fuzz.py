"""The fuzzer's rounds for the C pull read: ``collect_messages`` (``rocketq._native._record``,
get_message.c), which walks consume queue units and copies commitlog records, all bytes
that come from the store's files (and a damaged file is store input like any other).

``check_collect_store``: a small real store (10-unit consume queue files, 4 KiB
commitlog files, a few hundred records over two queues) whose consume queue units are
overwritten, a few per round, with random and edge values (offsets before, inside, between
and past the commitlog files, sizes negative, zero, huge and past a file's end, tags codes
past int32), then restored; every pull (random offset, count, code set) must give on
``get_message_body`` what ``get_message``, the reference, gives (or be declined).
``check_collect_files``: ``collect_messages`` called directly on made-up files (buffers of
random sizes, write positions past them, offsets not on file boundaries, attributes of the
wrong type, released views): it must return None, a well-formed walk or a TypeError, never
read past a buffer. ``check_pull_reply_head``: the woken pull's answer head (get_message.c)
on random pieces and numbers, against its Python twin. Under ``make fuzz`` the sanitizers
watch the reads.
"""

from __future__ import annotations

import dataclasses
import random
import struct
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rocketq.broker.processors.pull_answer import pull_reply_head
from rocketq.common import message_const as mc
from rocketq.common import native_record
from rocketq.common.hashing import java_string_hash
from rocketq.common.message import MessageExt
from rocketq.store.config import FlushDiskType, StoreConfig
from rocketq.store.format import CQ_STORE_UNIT_SIZE, CQ_STORE_UNIT_STRUCT
from rocketq.store.message_store import MessageStore
from rocketq.store.results import GetMessageResult

TAGS = ("A", "B", "C")
UNITS = 10  # per consume queue file
CL_FILE = 4096
EDGE_SIZES = (0, 1, -1, -(1 << 31), (1 << 31) - 1, CL_FILE, CL_FILE + 1, 60, 200)
EDGE_TAGS = (0, -1, 1 << 32, (1 << 63) - 1, -(1 << 63), java_string_hash("A"))


class CodeFilter:
    """A TAG filter as the broker's ExpressionMessageFilter applies it to a unit."""

    def __init__(self, codes: tuple[int, ...]) -> None:
        self.codes = codes

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        code = (tags_code or 0) & 0xFFFFFFFF
        return (code - (1 << 32) if code >= 1 << 31 else code) in self.codes

    def is_matched_by_commit_log(self, record: bytes) -> bool:
        return True


@contextmanager
def fuzz_store() -> Iterator[MessageStore]:
    """The fuzzer's store: 10-unit consume queue files, 4 KiB commitlog files, 120 records
    over two queues; removed when the run ends."""
    with tempfile.TemporaryDirectory(prefix="rocketq-collect-fuzz-") as root:
        config = dataclasses.replace(
            StoreConfig(),
            store_path_root_dir=root,
            mapped_file_size_commit_log=CL_FILE,
            mapped_file_size_consume_queue=UNITS * CQ_STORE_UNIT_SIZE,
            max_hash_slot_num=100,
            max_index_num=400,
            flush_disk_type=FlushDiskType.ASYNC_FLUSH,
            max_transfer_bytes_on_message_in_memory=2000,
        )
        store = MessageStore(config)
        store.load()
        store.start()
        try:
            rng = random.Random(7)
            for i in range(120):
                body = bytes([i]) * rng.randrange(1, 600)
                props = {mc.PROPERTY_TAGS: TAGS[i % 3]}
                store.put_message(
                    MessageExt(topic="T", body=body, properties=props, queue_id=i % 2)
                )
            store.wait_for_dispatch()
            yield store
        finally:
            store.shutdown()


def _fields(r: GetMessageResult) -> tuple[object, ...]:
    body = r.body if r.body is not None else b"".join(r.message_buffers)
    return (r.status, r.next_begin_offset, r.min_offset, r.max_offset, r.message_count, body)


def _codes(rng: random.Random) -> tuple[int, ...] | None:
    return rng.choice((None, (java_string_hash("A"),), (java_string_hash("B"), 1 << 40), ()))


def check_collect_store(rng: random.Random, store: MessageStore) -> str | None:
    """Damaged consume queue units: C's walk must equal ``get_message``'s (or decline)."""
    if native_record.COMPILED is None:
        return None
    cq = store.find_consume_queue("T", rng.randrange(2), create=False)
    assert cq is not None
    files = cq.mapped_file_queue.mapped_files
    saved: list[tuple[Any, int, bytes]] = []
    cl_end = store.commit_log.get_max_offset()
    try:
        for _ in range(rng.randrange(0, 4)):
            mf = rng.choice(files)
            pos = rng.randrange(UNITS) * CQ_STORE_UNIT_SIZE
            if pos + CQ_STORE_UNIT_SIZE > mf.wrote_position:
                continue
            saved.append((mf, pos, bytes(mf.view[pos : pos + CQ_STORE_UNIT_SIZE])))
            phy, size, tags = CQ_STORE_UNIT_STRUCT.unpack_from(mf.view, pos)
            phy = rng.choice((phy, 0, -1, cl_end, cl_end + 8, phy + 1, CL_FILE - 4, 1 << 62))
            size = rng.choice((size, *EDGE_SIZES))
            tags = rng.choice((tags, *EDGE_TAGS))
            CQ_STORE_UNIT_STRUCT.pack_into(mf.view, pos, phy, size, tags)
        for _ in range(4):
            difference = _compare(store, rng, cq.queue_id)
            if difference is not None:
                return difference
    finally:
        for mf, pos, unit in reversed(saved):
            mf.view[pos : pos + CQ_STORE_UNIT_SIZE] = unit
    return None


def _compare(store: MessageStore, rng: random.Random, queue_id: int) -> str | None:
    offset = rng.randrange(-2, 64)
    count = rng.choice((1, 3, 32, 1000))
    codes = _codes(rng)
    message_filter = None if codes is None else CodeFilter(codes)
    try:
        python = store.get_message("g", "T", queue_id, offset, count, message_filter)
    except (ValueError, OverflowError, struct.error):
        return None  # the reference itself fails on this damage: nothing to compare
    compiled = store.get_message_body("T", queue_id, offset, count, codes)
    if compiled is not None and _fields(compiled) != _fields(python):
        return (
            f"collect_messages({queue_id}, {offset}, {count}, {codes}): "
            f"{_fields(compiled)[:5]} != {_fields(python)[:5]}"
        )
    return None


@dataclasses.dataclass
class FakeFile:
    _view: Any
    file_from_offset: Any
    wrote_position: Any


def _fake_files(rng: random.Random, size: int, units: bool) -> list[FakeFile]:
    out = []
    for i in range(rng.randrange(0, 4)):
        buf = bytearray(rng.randrange(0, size + 40))
        if units:
            for pos in range(0, len(buf) - CQ_STORE_UNIT_SIZE + 1, CQ_STORE_UNIT_SIZE):
                phy = rng.choice((rng.randrange(0, 4 * size), -1, 1 << 62, 0))
                unit_size = rng.choice((rng.randrange(0, 200), *EDGE_SIZES))
                CQ_STORE_UNIT_STRUCT.pack_into(buf, pos, phy, unit_size, rng.choice(EDGE_TAGS))
        view: Any = memoryview(buf)
        if rng.random() < 0.05:
            view.release()
        elif rng.random() < 0.03:
            view = "not a buffer"
        start = rng.choice((i * size, i * size + 1, -size, 0))
        wrote = rng.choice((len(buf), len(buf) + 100, 0, rng.randrange(0, len(buf) + 1), "x"))
        out.append(FakeFile(view, start, wrote))
    return out


def check_collect_files(rng: random.Random) -> str | None:
    """Made-up files: None, a well-formed walk or a TypeError; never a read past a buffer."""
    compiled = native_record.COMPILED
    if compiled is None:
        return None
    cq_size, cl_size = rng.choice((20, 200, 1000)), rng.choice((64, 512, 4096))
    args = (
        _fake_files(rng, cq_size, True),
        cq_size,
        rng.choice((0, 20, -20)),
        _fake_files(rng, cl_size, False),
        cl_size,
        rng.choice((0, -1, 64)),
        rng.randrange(-2, 40),
        rng.randrange(0, 60),
        rng.choice((1, 16000)),
        rng.choice((1, 32, 0, -1)),
        rng.choice((0, 100, 1 << 20)),
        _codes(rng),
        rng.random() < 0.5,
    )
    try:
        walked = compiled.collect_messages(*args)
    except TypeError:
        return None
    if walked is None:
        return None
    status, _next, body, count, _max_phy = walked
    if not (0 <= status <= 3 and isinstance(body, bytes) and count >= 0):
        return f"collect_messages on made-up files: {walked!r}"
    return None


EDGE_NUMBERS = (0, 1, -1, 9, 10, -(1 << 63), (1 << 63) - 1, 1 << 63, -(1 << 63) - 1, 1 << 80)


def check_pull_reply_head(rng: random.Random) -> str | None:
    """``pull_reply_head`` (a woken pull's answer head, get_message.c) on random pieces,
    numbers and body lengths, some of the wrong type or count: where it answers, the bytes
    of its Python twin (``pull_answer.pull_reply_head``); where it declines, a shape it
    does not take."""
    compiled = native_record.COMPILED
    if compiled is None:
        return None
    count = rng.randrange(0, 10)
    pieces: list[Any] = [rng.randbytes(rng.choice((0, 1, 7, 200, 5000))) for _ in range(count + 1)]
    values: list[Any] = [
        rng.choice(EDGE_NUMBERS) if rng.random() < 0.3 else rng.randrange(-(10**12), 10**12)
        for _ in range(count)
    ]
    if rng.random() < 0.1 and values:
        values[rng.randrange(count)] = rng.choice(("1", 1.5, None))
    if rng.random() < 0.1:
        pieces[rng.randrange(count + 1)] = rng.choice(("x", bytearray(b"x"), None))
    if rng.random() < 0.1:
        del pieces[rng.randrange(count + 1)]
    body_length: Any = rng.choice((0, 1, 1024, (1 << 31) - 1, 1 << 31, -1, "1"))
    head = compiled.pull_reply_head(tuple(pieces), tuple(values), body_length)
    fits = (
        len(pieces) == count + 1
        and count <= 8
        and all(type(p) is bytes for p in pieces)
        and all(type(v) is int and -(1 << 63) <= v < (1 << 63) for v in values)
        and type(body_length) is int
        and 0 <= body_length < (1 << 31)
    )
    if fits:  # C's bound of the frame: 20 characters a number
        bound = sum(len(p) for p in pieces) + 20 * count
        fits = bound <= (1 << 31) - 1 - 4 - body_length
    if not fits:
        return (
            None if head is None else f"pull_reply_head took {pieces!r} {values!r} {body_length!r}"
        )
    twin = pull_reply_head(tuple(pieces), tuple(values), 0)[4:]  # the word and the header
    frame = len(twin) + body_length
    if head is None or head[4:] != twin or struct.unpack_from(">i", head)[0] != frame:
        return f"pull_reply_head gave {head!r} for {pieces!r} {values!r} {body_length!r}"
    return None
