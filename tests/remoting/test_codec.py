"""Socket-free tests of the remoting codec: fixtures, round trips, malformed frames."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.errors import RemotingCommandError
from rocketq.remoting.codec import (
    MAX_FRAME_SIZE,
    FrameDecoder,
    decode,
    decode_json_header,
    encode,
    encode_json_header,
)
from rocketq.remoting.protocol.codes import LanguageCode, RequestCode, SerializeType
from rocketq.remoting.protocol.command import RPC_ONEWAY, RPC_TYPE, RemotingCommand, next_opaque

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FRAME_FILES = sorted(FIXTURES.glob("*/*/*.bin"))


def _json_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _frames_by_file() -> dict[Path, dict[str, object]]:
    found: dict[Path, dict[str, object]] = {}
    for jsonl in FIXTURES.glob("*/*/frames.jsonl"):
        for line in jsonl.read_text().splitlines():
            entry = json.loads(line)
            found[jsonl.parent / f"{entry['file']}.bin"] = entry
    return found


def test_fixture_directory_holds_captured_frames() -> None:
    assert len(FRAME_FILES) > 300


@pytest.mark.parametrize(
    "path", FRAME_FILES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}"
)
def test_every_fixture_frame_decodes_and_reencodes_to_an_equal_command(path: Path) -> None:
    data = path.read_bytes()
    cmd = decode(data)
    assert cmd.serialize_type == SerializeType.JSON
    assert not cmd.is_response
    assert decode(encode(cmd)) == cmd
    binary = RemotingCommand(**{**_fields(cmd), "serialize_type": SerializeType.ROCKETMQ})
    again = decode(encode(binary))
    assert again.ext_fields == cmd.ext_fields
    assert again.body == cmd.body


def _fields(cmd: RemotingCommand) -> dict[str, object]:
    return {name: getattr(cmd, name) for name in RemotingCommand.__slots__}


def test_fixture_ext_fields_of_every_json_type_become_strings() -> None:
    entries = _frames_by_file()
    assert entries
    for path, entry in entries.items():
        cmd = decode(path.read_bytes())
        expected = {k: _json_text(v) for k, v in dict(entry["extFields"] or {}).items()}  # type: ignore[call-overload]
        assert cmd.ext_fields == expected, path
        assert cmd.code == entry["code"]
        assert cmd.opaque == entry["opaque"]
        assert len(cmd.body) == entry["body_length"]


def test_cpp_route_request_matches_the_worked_example() -> None:
    path = FIXTURES / "cpp-client-1.0.1" / "01-ns-producer" / "0001-code105.bin"
    data = path.read_bytes()
    assert data[:8] == bytes.fromhex("000000c1000000bd")
    cmd = decode(data)
    assert cmd.code == RequestCode.GET_ROUTEINFO_BY_TOPIC
    assert cmd.language == LanguageCode.CPP
    assert cmd.version == 63
    assert cmd.remark == ""
    topic = cmd.ext_fields["topic"]
    signed = ("ALIYUN" + topic).encode()
    expected = base64.b64encode(hmac.new(b"", signed, hashlib.sha1).digest()).decode()
    assert cmd.ext_fields["Signature"] == expected


def test_json_header_reads_numbers_and_booleans_as_text() -> None:
    header = b'{"code":310,"extFields":{"e":3,"k":false,"m":true,"g":1.5,"x":null},"flag":0}'
    cmd = decode_json_header(header)
    assert cmd.ext_fields == {"e": "3", "k": "false", "m": "true", "g": "1.5"}
    assert cmd.language == LanguageCode.OTHER
    assert cmd.remark is None


def test_json_response_header_looks_like_fastjson_output() -> None:
    cmd = RemotingCommand(code=0, opaque=7, flag=RPC_TYPE, ext_fields={"queueOffset": "42"})
    frame = encode(cmd)
    header = frame[8:]
    assert header == (
        b'{"code":0,"extFields":{"queueOffset":"42"},"flag":1,"language":"JAVA","opaque":7,'
        b'"serializeTypeCurrentRPC":"JSON","version":409}'
    )
    assert struct.unpack(">ii", frame[:8]) == (len(header) + 4, len(header))


def test_binary_header_puts_the_serialize_type_in_the_high_byte() -> None:
    cmd = RemotingCommand(
        code=105,
        opaque=3,
        remark="r",
        ext_fields={"topic": "T"},
        serialize_type=SerializeType.ROCKETMQ,
        body=b"xy",
    )
    frame = encode(cmd)
    length, word = struct.unpack(">iI", frame[:8])
    assert word >> 24 == 1
    header_length = word & 0xFFFFFF
    assert header_length == 13 + 4 + 1 + 4 + (2 + 5 + 4 + 1)
    assert length == 4 + header_length + 2
    assert decode(frame) == cmd


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
_int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
_int16 = st.integers(min_value=-(2**15), max_value=2**15 - 1)


@st.composite
def commands(draw: st.DrawFn, serialize_type: SerializeType) -> RemotingCommand:
    small = serialize_type == SerializeType.ROCKETMQ
    remark = draw(st.none() | _text)
    if small and remark == "":
        remark = None
    return RemotingCommand(
        code=draw(_int16 if small else _int32),
        language=draw(st.sampled_from(LanguageCode)),
        version=draw(_int16 if small else _int32),
        opaque=draw(_int32),
        flag=draw(st.sampled_from([0, RPC_TYPE, RPC_ONEWAY, RPC_TYPE | RPC_ONEWAY])),
        remark=remark,
        ext_fields=draw(st.dictionaries(_text, _text, max_size=8)),
        body=draw(st.binary(max_size=200)),
        serialize_type=serialize_type,
    )


@given(commands(SerializeType.JSON))
def test_json_commands_round_trip(cmd: RemotingCommand) -> None:
    assert decode(encode(cmd)) == cmd


@given(commands(SerializeType.ROCKETMQ))
def test_binary_commands_round_trip(cmd: RemotingCommand) -> None:
    assert decode(encode(cmd)) == cmd


@given(
    st.lists(commands(SerializeType.JSON) | commands(SerializeType.ROCKETMQ), max_size=5),
    st.integers(min_value=1, max_value=64),
)
def test_frame_decoder_reassembles_commands_from_any_chunking(
    cmds: list[RemotingCommand], chunk: int
) -> None:
    stream = b"".join(encode(c) for c in cmds)
    decoder = FrameDecoder()
    out: list[RemotingCommand] = []
    for start in range(0, len(stream), chunk):
        out.extend(decoder.feed(stream[start : start + chunk]))
    assert out == cmds
    assert decoder.buffered_size == 0


def test_frame_decoder_rejects_a_frame_above_sixteen_mebibytes() -> None:
    decoder = FrameDecoder()
    with pytest.raises(RemotingCommandError, match="exceeds the limit"):
        decoder.feed(struct.pack(">i", MAX_FRAME_SIZE - 3))


def test_frame_decoder_accepts_a_frame_at_a_smaller_configured_limit_boundary() -> None:
    frame = encode(RemotingCommand(code=1, body=b"z" * 100))
    assert FrameDecoder(max_frame_size=len(frame)).feed(frame)[0].body == b"z" * 100
    with pytest.raises(RemotingCommandError):
        FrameDecoder(max_frame_size=len(frame) - 1).feed(frame)


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (struct.pack(">i", 2) + b"\0\0", "below 4"),
        (struct.pack(">iI", 8, 9) + b"{}{}", "exceeds frame length"),
        (struct.pack(">iI", 6, 2) + b"{}", "not JSON|no code"),
        (struct.pack(">iI", 7, 3) + b"[1]", "not an object"),
        (struct.pack(">iI", 6, (7 << 24) | 2) + b"{}", "unknown serialize type"),
        (struct.pack(">iI", 14, 10) + b'{"code":"x', "not JSON"),
        (struct.pack(">iI", 14, 10) + b'{"code":"x"}'[:10], "not JSON"),
        (struct.pack(">iI", 16, (1 << 24) | 12) + b"\0" * 12, "too short"),
        (
            struct.pack(">iI", 4 + 21, (1 << 24) | 21) + b"\0" * 13 + struct.pack(">ii", 99, 0),
            "remark length",
        ),
        (
            struct.pack(">iI", 4 + 24, (1 << 24) | 24)
            + b"\0" * 13
            + struct.pack(">ii", 0, 3)
            + b"\x00\x09k",
            "key length",
        ),
    ],
)
def test_malformed_frames_raise_remoting_command_error(frame: bytes, reason: str) -> None:
    with pytest.raises(RemotingCommandError, match=reason):
        FrameDecoder().feed(frame)


def test_opaque_counter_increases_per_request() -> None:
    first = RemotingCommand.create_request(RequestCode.HEART_BEAT)
    second = RemotingCommand.create_request(RequestCode.HEART_BEAT)
    assert second.opaque == first.opaque + 1
    assert next_opaque() == second.opaque + 1
    assert not first.is_response


def test_response_to_copies_opaque_and_serialize_type() -> None:
    request = RemotingCommand(code=10, opaque=99, serialize_type=SerializeType.ROCKETMQ)
    response = RemotingCommand.create_response(0, "ok").response_to(request)
    assert (response.opaque, response.is_response, response.serialize_type) == (
        99,
        True,
        SerializeType.ROCKETMQ,
    )


def test_deeply_nested_json_header_raises_remoting_command_error() -> None:
    header = b'{"code":1,"extFields":' + b"[" * 100_000
    frame = struct.pack(">iI", 4 + len(header), len(header)) + header
    with pytest.raises(RemotingCommandError, match="nested too deeply"):
        FrameDecoder().feed(frame)


def test_json_header_keeps_the_exact_text_of_numbers() -> None:
    cmd = decode_json_header(b'{"code":10,"extFields":{"a":-0,"b":12345678901234567890}}')
    assert cmd.ext_fields == {"a": "-0", "b": "12345678901234567890"}


def _feed_or_reject(data: bytes) -> None:
    try:
        out = FrameDecoder().feed(data)
    except RemotingCommandError:
        return
    assert all(isinstance(c, RemotingCommand) for c in out)
    assert all(len(encode(c)) > 8 for c in out)


@given(st.binary(max_size=300))
def test_random_bytes_only_ever_raise_remoting_command_error(data: bytes) -> None:
    _feed_or_reject(data)


@given(st.data())
def test_mutated_fixture_frames_only_ever_raise_remoting_command_error(data: st.DataObject) -> None:
    frame = bytearray(data.draw(st.sampled_from(FRAME_FILES)).read_bytes())
    for _ in range(data.draw(st.integers(1, 6))):
        frame[data.draw(st.integers(0, len(frame) - 1))] = data.draw(st.integers(0, 255))
    _feed_or_reject(bytes(frame))


def test_lone_surrogate_from_an_escape_survives_a_round_trip() -> None:
    cmd = decode_json_header(b'{"code":1,"extFields":{"k":"\\ud800x"}}')
    assert cmd.ext_fields == {"k": "\ud800x"}
    assert decode(encode(cmd)).ext_fields == cmd.ext_fields


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)


@given(
    code=st.integers(-(2**15), 2**15 - 1),
    opaque=st.integers(-(2**31), 2**31 - 1),
    flag=st.integers(0, 3),
    remark=st.none() | st.text(max_size=30),
    ext_fields=st.dictionaries(_TEXT, st.text(max_size=30), max_size=6),
)
def test_json_header_written_out_is_the_bytes_json_dumps_gives(
    code: int,
    opaque: int,
    flag: int,
    remark: str | None,
    ext_fields: dict[str, str],
) -> None:
    cmd = RemotingCommand(code=code, opaque=opaque, flag=flag, remark=remark, ext_fields=ext_fields)
    obj: dict[str, object] = {"code": code}
    if ext_fields:
        obj["extFields"] = ext_fields
    obj.update(flag=flag, language=cmd.language.name, opaque=opaque)
    if remark is not None:
        obj["remark"] = remark
    obj.update(serializeTypeCurrentRPC="JSON", version=cmd.version)
    try:
        expected = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # a lone surrogate: kept escaped
        expected = json.dumps(obj, separators=(",", ":")).encode()
    assert encode_json_header(cmd) == expected
    assert decode_json_header(expected).ext_fields == ext_fields
