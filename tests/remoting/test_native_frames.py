"""The compiled request frames (``rocketq._native._remoting``) against the Python reference:
the same commands and the same errors on both paths, and a burst cut by a malformed frame."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.remoting import native_frames
from rocketq.remoting.codec import MAX_FRAME_SIZE, FrameDecoder, encode
from rocketq.remoting.protocol.codes import LanguageCode, RequestCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing import frame_fuzz
from rocketq.testing.broker import run_broker
from rocketq.testing.record_paths import outcome
from rocketq.testing.store import MIB, small_store_properties
from rocketq.testing.wire import send_request

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(native_frames.COMPILED is None, reason="extension not built"),
]

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURED = sorted(FIXTURES.rglob("*.bin"))
WAIT_S = 10.0


@pytest.fixture(autouse=True)
def _restore_path() -> Iterator[None]:
    before = native_frames.FRAMES
    yield
    native_frames.FRAMES = before


def feed(native: bool, data: bytes, max_size: int = MAX_FRAME_SIZE) -> tuple[list[object], str]:
    native_frames.use(native)
    commands, error = FrameDecoder(max_size).feed_until_error(data)
    return list(commands), "" if error is None else str(error)


def test_captured_client_frames_decode_in_c_as_in_python() -> None:
    data = b"".join(path.read_bytes() for path in CAPTURED)
    assert len(CAPTURED) > 300
    native = feed(True, data)
    assert native == feed(False, data)
    assert len(native[0]) == len(CAPTURED)
    assert native[1] == ""
    assert native_frames.COMPILED is not None
    items, consumed, error = native_frames.COMPILED.split_frames(data, MAX_FRAME_SIZE)
    assert consumed == len(data)
    assert error is None
    assert all(isinstance(item, RemotingCommand) for item in items)  # none left to Python


def test_a_frame_split_anywhere_decodes_the_same() -> None:
    data = b"".join(path.read_bytes() for path in CAPTURED[:20])
    for native in (True, False):
        native_frames.use(native)
        for cut in range(0, len(data), 97):
            decoder = FrameDecoder()
            commands = decoder.feed(data[:cut]) + decoder.feed(data[cut:])
            assert len(commands) == 20
            assert decoder.buffered_size == 0


texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)


@given(
    code=st.integers(-(2**15), 2**15 - 1),
    language=st.sampled_from(list(LanguageCode)),
    opaque=st.integers(-(2**31), 2**31 - 1),
    flag=st.integers(0, 3),
    remark=st.none() | texts,
    fields=st.dictionaries(texts, texts, max_size=8),
    body=st.binary(max_size=64),
    serialize=st.sampled_from([SerializeType.JSON, SerializeType.ROCKETMQ]),
)
def test_any_command_round_trips_alike_on_both_paths(
    code: int,
    language: LanguageCode,
    opaque: int,
    flag: int,
    remark: str | None,
    fields: dict[str, str],
    body: bytes,
    serialize: SerializeType,
) -> None:
    cmd = RemotingCommand(code, language, 317, opaque, flag, remark, fields, body, serialize)
    native_frames.use(True)
    data = encode(cmd) * 2
    native_frames.use(False)
    assert data == encode(cmd) * 2  # C's JSON head is Python's, byte for byte
    native = feed(True, data)
    assert native == feed(False, data)
    assert native[1] == ""
    assert len(native[0]) == 2


HEADERS = [
    '{"code":310,"extFields":{"a":"1","b":2,"c":true,"d":null,"a":"3"},"opaque":7}',
    '{"code":310,"extFields":{"a":null,"b":"2","a":"3"}}',
    '{"code":"310","flag":"2","remark":12,"language":"CPP","version":null}',
    '{"code":1,"language":0,"remark":false,"serializeTypeCurrentRPC":"JSON"}',
    '{"code":1,"remark":"\\u0001\\u0002\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u4e2d"}',
    ' {"code":1} ',
    '{"code":1,"extFields":{"k":"\\ud83d\\ude00"}}',
    '{"code":1,"extFields":{"k":[1]}}',
    '{"code":1,"other":{"nested":[1,2]}}',
    '{"code":1.0}',
    '{"code":2147483648}',
    '{"code":" 7"}',
    '{"code":null}',
    "{}",
    '{"code":1,}',
    '{"code":1}x',
    '{"code":NaN}',
    '{"code":1,"extFields":"x"}',
    '{"code":1,"remark":"\x01"}',
    '{"code":-0,"opaque":-2147483648,"flag":1e2}',
    "[]",
]


@pytest.mark.parametrize("header", HEADERS)
def test_json_headers_real_clients_never_send_decode_or_fail_alike(header: str) -> None:
    raw = header.encode("utf-8", "surrogatepass")
    body = b"body"
    frame = (len(raw) + 4 + len(body)).to_bytes(4, "big") + len(raw).to_bytes(4, "big")
    data = frame + raw + body
    assert feed(True, data) == feed(False, data)


@pytest.mark.parametrize(
    "cmd",
    [
        RemotingCommand(code=1, ext_fields={"k": 1}),  # type: ignore[dict-item]
        RemotingCommand(code=1, remark="\ud800"),
        RemotingCommand(code=1, language=3),  # type: ignore[arg-type]
        RemotingCommand(code=2**70),
        RemotingCommand(code=1, ext_fields={"\x00\x1f\x7f": '"\\/\b\f\n\r\t\u00e9'}),
    ],
)
def test_commands_the_c_encoder_leaves_to_python_encode_alike(cmd: RemotingCommand) -> None:
    native_frames.use(True)
    native = outcome(lambda: encode(cmd))
    native_frames.use(False)
    assert native == outcome(lambda: encode(cmd))


def test_bad_bytes_in_an_ignored_key_fail_alike() -> None:
    raw = b'{"code":1,"x\xff":"y"}'
    data = (len(raw) + 4).to_bytes(4, "big") + len(raw).to_bytes(4, "big") + raw
    native = feed(True, data)
    assert native == feed(False, data)
    assert "not JSON" in native[1]


@pytest.mark.parametrize(
    ("length", "max_size", "reason"),
    [(3, MAX_FRAME_SIZE, "below 4"), (-5, MAX_FRAME_SIZE, "below 4"), (5000, 4096, "exceeds")],
)
def test_a_bad_length_inside_a_burst_returns_the_frames_before_it(
    length: int, max_size: int, reason: str
) -> None:
    good = encode(RemotingCommand(code=34, opaque=1)) + encode(RemotingCommand(code=34, opaque=2))
    data = good + (length & 0xFFFFFFFF).to_bytes(4, "big") + b"\x00" * 16
    native = feed(True, data, max_size)
    assert native == feed(False, data, max_size)
    assert [c.opaque for c in native[0]] == [1, 2]  # type: ignore[attr-defined]
    assert reason in native[1]


@pytest.mark.parametrize("native", [True, False])
async def test_a_burst_cut_by_a_malformed_frame_is_answered_and_the_connection_closed(
    tmp_path: Path, native: bool
) -> None:
    native_frames.use(native)
    async with run_broker(tmp_path, store_properties=small_store_properties(MIB)) as broker:
        host, port = broker.broker_addr.split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        sends = [
            send_request("Cut", b"m%d" % i, code=RequestCode.SEND_MESSAGE_V2) for i in range(5)
        ]
        writer.write(b"".join(encode(r) for r in sends) + b"\x00\x00\x00\x02garbage")
        decoder = FrameDecoder()
        replies: list[RemotingCommand] = []
        async with asyncio.timeout(WAIT_S):
            while data := await reader.read(65536):  # b"" once the broker closes
                replies += decoder.feed(data)
        writer.close()
        assert sorted(r.opaque for r in replies) == sorted(r.opaque for r in sends)
        assert {r.code for r in replies} == {ResponseCode.SUCCESS}
        store = broker.message_store
        assert store.wait_for_dispatch(WAIT_S)
        tc = broker.topic_config_manager.select_topic_config("Cut")
        assert tc is not None
        queues = range(tc.write_queue_nums)
        assert sum(store.get_max_offset_in_queue("Cut", q) for q in queues) == len(sends)


def test_the_fuzzer_finds_nothing_in_a_short_run() -> None:
    corpus = frame_fuzz.load_corpus([FIXTURES])
    lines: list[str] = []
    assert frame_fuzz.run(4.0, random.randrange(1 << 31), corpus, lines.append) == 0, lines


def test_the_fuzzer_finds_nothing_in_the_sanitized_build() -> None:
    """``make fuzz``'s run, short: the extensions built with ASan and UBSan."""
    root = Path(__file__).resolve().parents[2]
    argv = ["--seconds", "6", "--corpus", str(FIXTURES)]
    assert frame_fuzz.run_sanitized(argv, root, timeout_s=240) == 0, sys.executable


def _json_frame(header: bytes, body: bytes) -> bytes:
    return struct.pack(">ii", 4 + len(header) + len(body), len(header)) + header + body


def test_split_sends_reads_a_send_s_fields_as_split_frames_does() -> None:
    """A send the split reads comes as (request, put, header): its extFields read into the put
    from the header's text, the request's dict left empty until ``full_request`` (or filled at
    once past 32 items); either way the request split_frames gives, and the put send_put_of's."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    spec = frame_fuzz.SEND_SPEC
    plain = send_request("Spans", b"body", queue_id=3, code=RequestCode.SEND_MESSAGE_V2)
    many = send_request("Spans", b"body", code=RequestCode.SEND_MESSAGE_V2)
    many.ext_fields |= {f"x{i}": str(i) for i in range(40)}
    frame = encode(plain)
    header = frame[8 : 8 + struct.unpack_from(">i", frame, 4)[0]]
    # escapes in the topic and a key, queue ids before the header's (the last wins), a null
    edited = header.replace(b'"b":"Spans"', b'"b":"Sp\\u0061ns","\\u0065":"9","e":"5"')
    edited = edited.replace(b'"extFields":{', b'"extFields":{"zz":null,')
    assert b'"e":"3"' in edited
    for data, lazy in (
        (frame, True),
        (encode(many), False),
        (_json_frame(edited, b"body"), True),
    ):
        items, consumed, error = compiled.split_sends(data, MAX_FRAME_SIZE, spec)
        assert (consumed, error) == (len(data), None)
        request, put, text = items[0]
        assert text == data[8 : 8 + struct.unpack_from(">i", data, 4)[0]]
        assert (not request.ext_fields) is lazy
        expected = compiled.split_frames(data, MAX_FRAME_SIZE)[0][0]
        assert isinstance(expected, RemotingCommand)
        assert native_frames.full_request(items[0]) == expected
        assert put == compiled.send_put_of(expected.ext_fields, expected.body, *spec[1:])
    assert put.topic == "Spans"
    assert put.queue_id == 3


def _configure(command_cls: type) -> None:
    compiled = native_frames.COMPILED
    assert compiled is not None
    compiled.configure(  # type: ignore[attr-defined]
        command_cls,
        sorted(LanguageCode, key=int),
        LanguageCode.OTHER,
        SerializeType.JSON,
        SerializeType.ROCKETMQ,
    )


def test_the_split_fills_a_command_s_slots_only_where_its_init_does_nothing_else() -> None:
    """C builds a RemotingCommand by storing its slots (no __init__ frame): every field as the
    class's own constructor sets it; a command class whose __init__ does more (here a
    ``__post_init__``) is called, as before."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    request = send_request("SlotT", b"body", tags="t", code=RequestCode.SEND_MESSAGE_V2)
    request.opaque, request.flag, request.remark = 77, 2, "a remark"
    frame = encode(request)
    items, consumed, error = compiled.split_frames(frame, MAX_FRAME_SIZE)
    assert (consumed, error) == (len(frame), None)
    (built,) = items
    assert type(built) is RemotingCommand
    assert built == RemotingCommand(**{f: getattr(request, f) for f in request.__slots__})
    assert built.ext_fields == request.ext_fields

    seen: list[object] = []

    @dataclasses.dataclass(slots=True)
    class Noting(RemotingCommand):
        def __post_init__(self) -> None:
            seen.append(self.opaque)

    try:
        _configure(Noting)
        (noted,), _, _ = compiled.split_frames(frame, MAX_FRAME_SIZE)
        assert type(noted) is Noting
        assert seen == [77]
    finally:
        _configure(RemotingCommand)
    (again,), _, _ = compiled.split_frames(frame, MAX_FRAME_SIZE)
    assert type(again) is RemotingCommand
    assert seen == [77]
