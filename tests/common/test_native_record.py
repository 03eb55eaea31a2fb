"""The compiled record codec (rocketq._native._record) against the pure-Python one: golden
vectors, Hypothesis round trips, corrupted input (with a guard page behind the buffer)."""

from __future__ import annotations

import ctypes
import mmap
import os
import struct
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common import native_record
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_messages, encode_message
from rocketq.errors import DecodeError
from rocketq.testing.record_paths import on_both, on_both_damaged, record_paths
from rocketq.testing.strategies import messages
from rocketq.testing.vectors import HEXES, message, record

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def test_the_extension_is_built_and_selected_unless_the_environment_says_0() -> None:
    # a build failure must not pass silently as the pure-Python fallback
    assert native_record.COMPILED is not None
    off = os.environ.get(native_record.ENV_SWITCH) == "0"
    assert native_record.active() == ("python" if off else "c")


def test_the_switch_selects_the_pure_python_paths_and_back() -> None:
    with record_paths(False):
        assert native_record.active() == "python"
    with record_paths(True):
        assert native_record.active() == "c"


@pytest.mark.parametrize("n", sorted(HEXES))
@pytest.mark.parametrize("native", [False, True], ids=["python", "c"])
def test_golden_vectors_encode_byte_for_byte_on_both_paths(n: int, native: bool) -> None:
    with record_paths(native):
        assert bytes(encode_message(message(n))) == record(n)


@pytest.mark.parametrize("native", [False, True], ids=["python", "c"])
def test_golden_vectors_decode_as_one_pull_body_on_both_paths(native: bool) -> None:
    body = b"".join(record(n) for n in sorted(HEXES))
    with record_paths(native):
        msgs = decode_messages(body, check_crc=True)
    assert [m.topic for m in msgs] == [message(n).topic for n in sorted(HEXES)]
    assert [m.properties for m in msgs] == [message(n).properties for n in sorted(HEXES)]
    with record_paths(not native):
        assert decode_messages(body, check_crc=True) == msgs


@given(st.binary(max_size=5000))
def test_crc32_is_zlibs_by_every_way_the_module_has(data: bytes) -> None:
    from rocketq._native import _record

    assert _record.crc32(data) == zlib.crc32(data)
    assert _record.crc32_table(data) == zlib.crc32(data)
    assert _record.crc32_libz(data) == zlib.crc32(data)


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 63, 64, 65, 79, 80, 127, 128, 1024, 1 << 20])
def test_crc32_is_zlibs_around_the_folding_block_sizes(size: int) -> None:
    from rocketq._native import _record

    data = bytes((i * 131 + size) & 0xFF for i in range(size))
    assert _record.crc32(data) == zlib.crc32(data)
    assert _record.crc32(memoryview(data)[1:]) == zlib.crc32(data[1:])  # unaligned start


def test_the_scans_use_the_fastest_crc32_found() -> None:
    from rocketq._native import _record

    assert _record.CRC32_IMPL in ("pclmul", "libz")


@given(messages())
def test_any_message_encodes_to_the_same_bytes_on_both_paths(msg: MessageExt) -> None:
    python, compiled = on_both(lambda: bytes(encode_message(msg)))
    assert python == compiled
    assert python[0] == "ok"


@given(st.dictionaries(_text, st.one_of(st.none(), _text), max_size=6))
def test_any_properties_dict_encodes_and_parses_the_same_on_both_paths(
    props: dict[str, str | None],
) -> None:
    msg = MessageExt(topic="T", body=b"b", properties=props)  # type: ignore[arg-type]
    python, compiled = on_both(lambda: bytes(encode_message(msg)))
    assert python == compiled
    if python[0] == "ok":
        data = python[1]
        assert isinstance(data, bytes)
        py_dec, c_dec = on_both(lambda: decode_messages(data))
        assert py_dec == c_dec
        assert py_dec[0] == "ok"


@given(st.lists(messages(), min_size=1, max_size=5), st.booleans(), st.booleans())
def test_any_pull_body_decodes_to_equal_messages_on_both_paths(
    msgs: list[MessageExt], check_crc: bool, read_body: bool
) -> None:
    body = b"".join(bytes(encode_message(m)) for m in msgs)
    python, compiled = on_both(
        lambda: decode_messages(body, check_crc=check_crc, read_body=read_body)
    )
    assert python == compiled
    assert python[0] == "ok"


@pytest.mark.parametrize(
    ("field", "value"),
    [("queue_id", 1 << 31), ("flag", -(1 << 31) - 1), ("queue_offset", 1 << 63)],
)
def test_a_value_that_does_not_fit_its_field_fails_on_both_paths(field: str, value: int) -> None:
    msg = message(1)
    setattr(msg, field, value)
    python, compiled = on_both(lambda: encode_message(msg))
    assert python[0] in ("error", "OverflowError", "ValueError")
    assert compiled[0] in ("OverflowError", "ValueError")


def test_properties_over_32767_bytes_fail_on_both_paths() -> None:
    msg = message(1)
    msg.properties["BIG"] = "x" * 40_000
    python, compiled = on_both(lambda: encode_message(msg))
    assert python[0] == "error"  # struct.error
    assert compiled[0] == "ValueError"


def _corrupted(body: bytes, at: int, junk: bytes) -> bytes:
    at %= len(body)
    return body[:at] + junk + body[at + len(junk) :]


@given(
    st.lists(messages(), min_size=1, max_size=3),
    st.integers(0, 1 << 20),
    st.binary(min_size=1, max_size=6),
    st.booleans(),
)
def test_a_corrupted_pull_body_fails_or_decodes_the_same_on_both_paths(
    msgs: list[MessageExt], at: int, junk: bytes, check_crc: bool
) -> None:
    body = _corrupted(b"".join(bytes(encode_message(m)) for m in msgs), at, junk)
    python, compiled = on_both_damaged(lambda: decode_messages(body, check_crc=check_crc))
    assert python == compiled


@given(st.lists(messages(), min_size=1, max_size=3), st.integers(1, 400))
def test_a_truncated_pull_body_decodes_or_fails_the_same_on_both_paths(
    msgs: list[MessageExt], cut: int
) -> None:
    records = [bytes(encode_message(m)) for m in msgs]
    ends = {sum(len(r) for r in records[: i + 1]) for i in range(len(records))}
    body = b"".join(records)
    body = body[: max(1, len(body) - cut)]
    python, compiled = on_both_damaged(lambda: decode_messages(body))
    assert python == compiled
    # a cut on a record boundary leaves whole records; anywhere else the last one is torn
    assert python[0] == ("ok" if len(body) in ends else DecodeError.__name__)


# Length fields of vector 1 (IPv4 hosts): TOTALSIZE, BODYLENGTH, TOPICLEN, PROPLEN.
_TOTAL_AT, _BODY_LEN_AT, _TOPIC_LEN_AT = 0, 84, 88 + 14
_PROPS_LEN_AT = _TOPIC_LEN_AT + 1 + len("TopicTest")


class GuardedBuffer:
    """Bytes that end right before a PROT_NONE page: reading past them crashes the test."""

    def __init__(self, data: bytes) -> None:
        page = mmap.PAGESIZE
        size = (len(data) // page + 1) * page
        self.mm = mmap.mmap(-1, size + page)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(self.mm))
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.mprotect(ctypes.c_void_p(addr + size), ctypes.c_size_t(page), 0) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
        self.start = size - len(data)
        self.mm[self.start : size] = data
        self.view = memoryview(self.mm)[self.start : size]


_GUARDED: list[GuardedBuffer] = []  # kept mapped: the guard page must outlive every view


@pytest.mark.parametrize(
    ("at", "fmt"),
    [(_TOTAL_AT, ">i"), (_BODY_LEN_AT, ">i"), (_TOPIC_LEN_AT, ">B"), (_PROPS_LEN_AT, ">H")],
    ids=["TOTALSIZE", "BODYLENGTH", "TOPICLEN", "PROPLEN"],
)
def test_a_corrupted_length_never_reads_past_the_buffer(at: int, fmt: str) -> None:
    good = record(1)
    values = {0, 1, 90, 91, len(good) - 1, len(good) + 1, (1 << (8 * struct.calcsize(fmt))) - 1}
    values |= {(1 << (8 * struct.calcsize(fmt) - 1)) - 1, 1 << (8 * struct.calcsize(fmt) - 1)}
    for value in sorted(values):
        raw = bytearray(good)
        struct.pack_into(fmt.upper() if fmt != ">i" else ">I", raw, at, value)
        guarded = GuardedBuffer(bytes(raw))
        _GUARDED.append(guarded)
        python, compiled = on_both_damaged(
            lambda g=guarded: decode_messages(g.view, check_crc=True)
        )
        assert python == compiled, value
