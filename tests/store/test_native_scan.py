"""The compiled commitlog scan against the pure-Python one: the same DispatchRequests, the same
stop offsets and reasons for blank, corrupted, torn and incomplete records."""

from __future__ import annotations

import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import encode_message
from rocketq.common.topic import SCHEDULE_TOPIC
from rocketq.store import StoreConfig
from rocketq.store.commitlog import CommitLog, EncodedMessage
from rocketq.store.recovery import scan_file
from rocketq.testing.record_paths import on_both, on_both_damaged
from rocketq.testing.store import commit_log_config

SEG = 16 * 1024
TS = 1700000000123


def _config(root: Path) -> StoreConfig:
    return commit_log_config(root, TS, mapped_file_size_commit_log=SEG)


def _messages() -> list[MessageExt]:
    v6 = ("::1", 7)
    return [
        MessageExt("TopicA", b"a" * 300, properties={"TAGS": "TagA", "KEYS": "k1 k2"}),
        MessageExt("TopicA", b"", queue_id=1, properties={"UNIQ_KEY": "ABC", "TAGS": "é✓𝄞"}),
        MessageExt("T" * 200, b"long topic", properties={"KEYS": "x"}),  # v2 magic
        MessageExt("TopicB", b"v6 hosts", born_host=v6, store_host=v6),
        MessageExt(SCHEDULE_TOPIC, b"delayed", properties={"DELAY": "3", "TAGS": "t"}),
        MessageExt(SCHEDULE_TOPIC, b"bad level", properties={"DELAY": "x"}),
        MessageExt("TopicC", b"x" * 2000, properties={}),
    ]


@pytest.fixture
def log(tmp_path: Path) -> Iterator[CommitLog]:
    """A commitlog of a few files (blank records at their ends) of varied records."""
    cl = CommitLog(_config(tmp_path))
    cl.load()
    for round_ in range(6):
        for msg in _messages():
            msg.queue_id = round_ % 3
            cl.append(EncodedMessage(encode_message(msg), msg.topic, msg.queue_id))
    yield cl
    cl.shutdown()


def _dispatch_all(cl: CommitLog, check_crc: bool, read_properties: bool, chunk: int) -> object:
    out = []
    offset = 0
    while True:
        reqs, nxt, bad = cl.read_dispatch_requests(
            offset, check_crc=check_crc, max_bytes=chunk, read_properties=read_properties
        )
        out.append((reqs, nxt, bad))
        if bad or nxt == offset:
            return out
        offset = nxt


@pytest.mark.parametrize("check_crc", [False, True])
@pytest.mark.parametrize("read_properties", [False, True])
@pytest.mark.parametrize("chunk", [700, 1 << 20])
def test_dispatch_requests_are_equal_on_both_paths(
    log: CommitLog, check_crc: bool, read_properties: bool, chunk: int
) -> None:
    python, compiled = on_both(lambda: _dispatch_all(log, check_crc, read_properties, chunk))
    assert python == compiled
    assert python[0] == "ok"
    runs = python[1]
    assert isinstance(runs, list)
    reqs = [r for run in runs for r in run[0]]
    assert len(reqs) == 6 * len(_messages())
    assert runs[-1][1] == log.get_max_offset()
    delayed = [r for r in reqs if r.topic == SCHEDULE_TOPIC]
    if read_properties:  # DELAY 3 is delivered 10 s after the store time (tags code)
        assert {r.tags_code - r.store_timestamp for r in delayed} >= {10_000}


def _first_file(cl: CommitLog) -> memoryview:
    return cl.mapped_file_queue.mapped_files[0].view


_FAULTS = {
    "bad magic": (4, b"\x12\x34\x56\x78"),
    "bad CRC": (8, b"\x00\x00\x00\x01"),
    "TOTALSIZE past the file": (0, struct.pack(">i", 1 << 30)),
    "TOTALSIZE too small": (0, struct.pack(">i", 40)),
    "negative BODYLENGTH": (84, struct.pack(">i", -5)),
    "BODYLENGTH past the record": (84, struct.pack(">i", 5000)),
    "blank magic with a bad size": (0, struct.pack(">iI", 1 << 20, 0xCBD43194)),
    "zeroed header": (0, bytes(8)),
    "wrong PHYSICALOFFSET": (28, struct.pack(">q", 12345)),
}


@pytest.mark.parametrize("fault", sorted(_FAULTS))
def test_a_corrupted_record_stops_both_scans_at_the_same_offset(log: CommitLog, fault: str) -> None:
    second = encode_message(_messages()[0])
    at = len(second)  # the second record of the first file
    field, junk = _FAULTS[fault]
    view = _first_file(log)
    view[at + field : at + field + len(junk)] = junk
    mf = log.mapped_file_queue.mapped_files[0]
    python, compiled = on_both_damaged(lambda: scan_file(mf, 0, True, {}))
    assert python == compiled == ("ok", (at, False))
    python, compiled = on_both_damaged(
        lambda: _dispatch_all(log, fault == "bad CRC", True, 1 << 20)
    )
    assert python[0] == "ok"
    assert python == compiled
    runs = python[1]
    assert isinstance(runs, list)
    assert runs[-1][1:] == (at, True)


def test_a_clean_file_scans_to_its_blank_record_on_both_paths(log: CommitLog) -> None:
    mf = log.mapped_file_queue.mapped_files[0]
    python, compiled = on_both(lambda: scan_file(mf, 0, True, {}))
    assert python == compiled
    assert python[1] == (mf.wrote_position - (mf.wrote_position - _blank_at(mf.view)), True)


def _blank_at(view: memoryview) -> int:
    pos = 0
    while struct.unpack_from(">I", view, pos + 4)[0] != 0xCBD43194:
        pos += struct.unpack_from(">i", view, pos)[0]
    return pos


def test_a_torn_tail_stops_both_scans_at_the_last_whole_record(tmp_path: Path) -> None:
    cl = CommitLog(_config(tmp_path))
    cl.load()
    sizes = [
        cl.append(EncodedMessage(encode_message(msg), msg.topic, 0)).wrote_bytes
        for msg in _messages()[:3]
    ]
    mf = cl.mapped_file_queue.mapped_files[0]
    torn = sizes[0] + sizes[1] + 20  # the third record's head only
    mf.view[torn : mf.wrote_position] = bytes(mf.wrote_position - torn)
    python, compiled = on_both_damaged(lambda: scan_file(mf, 0, True, {}))
    assert python == compiled == ("ok", (sizes[0] + sizes[1], False))
    cl.shutdown()


def test_a_record_a_slave_holds_part_of_is_left_for_later_on_both_paths(tmp_path: Path) -> None:
    cl = CommitLog(_config(tmp_path))
    cl.load()
    first = cl.append(EncodedMessage(encode_message(_messages()[0]), "TopicA", 0))
    second = cl.append(EncodedMessage(encode_message(_messages()[6]), "TopicC", 0))
    mf = cl.mapped_file_queue.mapped_files[0]
    mf.wrote_position = second.wrote_offset + 100  # the slave has 100 bytes of it so far
    python, compiled = on_both(lambda: cl.read_dispatch_requests(0, check_crc=True))
    assert python == compiled
    assert python[0] == "ok"
    reqs, nxt, bad = python[1]  # type: ignore[misc]
    assert (len(reqs), nxt, bad) == (1, first.wrote_bytes, False)
    cl.shutdown()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(st.integers(0, 3000), st.binary(min_size=1, max_size=8))
def test_random_damage_gives_the_same_scan_and_dispatch_on_both_paths(
    log: CommitLog, at: int, junk: bytes
) -> None:
    mf = log.mapped_file_queue.mapped_files[0]
    saved = bytes(mf.view[at : at + len(junk)])
    mf.view[at : at + len(junk)] = junk
    try:
        python, compiled = on_both_damaged(
            lambda: (scan_file(mf, 0, True, {}), _dispatch_all(log, True, True, 1 << 20))
        )
        assert python[0] == "ok"  # a scan reports damage as where it stopped, never raises
        assert python == compiled
    finally:
        mf.view[at : at + len(junk)] = saved


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(min_size=1, max_size=12))
def test_topic_bytes_pass_the_scan_only_where_they_are_utf8_on_both_paths(
    tmp_path: Path, topic: bytes
) -> None:
    msg = MessageExt("x" * len(topic), b"body")
    record = encode_message(msg)
    at = 88 + len(msg.body) + 1
    record[at : at + len(topic)] = topic
    with tempfile.TemporaryDirectory(dir=tmp_path) as root:
        cl = CommitLog(_config(Path(root)))
        cl.load()
        cl.append(EncodedMessage(record, msg.topic, 0))
        mf = cl.mapped_file_queue.mapped_files[0]
        python, compiled = on_both_damaged(lambda: scan_file(mf, 0, True, {}))
        cl.shutdown()
    assert python[0] == "ok"
    assert python == compiled
    try:
        topic.decode("utf-8")
    except UnicodeDecodeError:
        assert python == ("ok", (0, False))
