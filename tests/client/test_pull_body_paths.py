"""A pull answer's messages as the push consumer hands them to its listener: the C path
(``decode_records`` with the pull's offsets, MessageExt filled slot by slot) against the
Python reference (``process_pull_body_reference``), equal objects with equal property order."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, fields

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.aio.pull_api import process_pull_body
from rocketq.client.status import PullResult, PullStatus
from rocketq.common import message_const as mc
from rocketq.common import native_record
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_messages, encode_message
from rocketq.common.message_id import bytes_to_host
from rocketq.remoting.protocol.subscription import build_subscription_data
from rocketq.testing.record_paths import record_paths
from rocketq.testing.strategies import messages

_tag = st.sampled_from(["", "a", "b", "c"])
_expression = st.sampled_from(["*", "a", "a || b", "c || a"])
_offset = st.integers(min_value=0, max_value=2**62)


def _both(body: bytes, expression: str, min_offset: int, max_offset: int) -> list[MessageExt]:
    result = PullResult(
        status=PullStatus.FOUND, next_begin_offset=1, min_offset=min_offset, max_offset=max_offset
    )
    sub = build_subscription_data("T", expression)
    with record_paths(False):
        python = process_pull_body(body, sub, result)
    with record_paths(True):
        compiled = process_pull_body(body, sub, result)
    assert compiled == python
    for c, p in zip(compiled, python, strict=True):
        assert list(c.properties.items()) == list(p.properties.items())
        assert type(c) is MessageExt
    return compiled


@given(st.lists(st.tuples(messages(), _tag), max_size=6), _expression, _offset, _offset)
def test_any_pull_body_gives_the_listener_equal_messages_on_both_paths(
    drawn: list[tuple[MessageExt, str]], expression: str, min_offset: int, max_offset: int
) -> None:
    body = b""
    for msg, tag in drawn:
        msg.sys_flag &= ~MessageSysFlag.COMPRESSED_FLAG
        if tag:
            msg.tags = tag
        body += bytes(encode_message(msg))
    kept = _both(body, expression, min_offset, max_offset)
    for msg in kept:
        assert msg.properties[mc.PROPERTY_MIN_OFFSET] == str(min_offset)
        assert msg.properties[mc.PROPERTY_MAX_OFFSET] == str(max_offset)
        uniq = msg.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        assert msg.msg_id == (uniq or msg.offset_msg_id)


def test_a_compressed_record_takes_the_python_path_for_the_whole_body() -> None:
    plain = MessageExt(topic="T", body=b"plain", queue_offset=0)
    plain.put_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, "U0")
    packed = MessageExt(topic="T", body=zlib.compress(b"packed"), queue_offset=1)
    packed.sys_flag = MessageSysFlag.COMPRESSED_FLAG
    body = bytes(encode_message(plain)) + bytes(encode_message(packed))
    kept = _both(body, "*", 0, 2)
    assert [m.body for m in kept] == [b"plain", b"packed"]
    assert kept[0].msg_id == "U0"


def test_slot_filled_messages_equal_the_constructors_with_shared_names_kept_apart() -> None:
    msgs = []
    for i in range(3):
        msg = MessageExt(topic="T", body=b"b%d" % i, queue_offset=i, commitlog_offset=i * 90)
        msg.put_property("K", f"v{i}")
        msgs.append(msg)
    body = b"".join(bytes(encode_message(m)) for m in msgs)
    with record_paths(True):
        got = decode_messages(body)
    with record_paths(False):
        assert decode_messages(body) == got
    got[0].properties["K"] = "changed"  # one dict a message, though the names are shared
    assert [m.properties["K"] for m in got] == ["changed", "v1", "v2"]
    assert got[1].properties is not got[2].properties


@dataclass(slots=True)
class _Counted(MessageExt):
    """A MessageExt subclass with a __post_init__: decode_records must call it."""

    seen: int = 0

    def __post_init__(self) -> None:
        self.seen += 1


def test_a_class_with_a_post_init_is_constructed_by_its_call() -> None:
    compiled = native_record.COMPILED
    if compiled is None:
        pytest.skip("the record paths are not compiled")
    body = bytes(encode_message(MessageExt(topic="T", body=b"x")))
    n = len(fields(MessageExt))

    def make(*args: object) -> _Counted:
        assert len(args) == n
        return _Counted(*args)  # type: ignore[arg-type]

    msgs, _pos, stopped = compiled.decode_records(body, 0, False, True, False, make, bytes_to_host)
    assert not stopped
    assert msgs[0].seen == 1
    msgs, _pos, stopped = compiled.decode_records(
        body, 0, False, True, False, _Counted, bytes_to_host
    )
    assert not stopped
    assert msgs[0].seen == 1
    assert msgs[0].body == b"x"
    plain, _pos, _stopped = compiled.decode_records(
        body, 0, False, True, False, MessageExt, bytes_to_host
    )
    assert plain[0] == decode_messages(body)[0]


@dataclass(slots=True)
class _Wider(MessageExt):
    """A field more, with a default: only its constructor sets it."""

    extra: str = "default"


def test_a_class_with_a_field_more_is_constructed_by_its_call() -> None:
    compiled = native_record.COMPILED
    if compiled is None:
        pytest.skip("the record paths are not compiled")
    body = bytes(encode_message(MessageExt(topic="T", body=b"x")))
    msgs, _pos, stopped = compiled.decode_records(
        body, 0, False, True, False, _Wider, bytes_to_host
    )
    assert not stopped
    assert msgs[0].extra == "default"
    assert msgs[0].body == b"x"


def test_offset_texts_must_be_str() -> None:
    compiled = native_record.COMPILED
    if compiled is None:
        pytest.skip("the record paths are not compiled")
    body = bytes(encode_message(MessageExt(topic="T", body=b"x")))
    with pytest.raises(TypeError):
        compiled.decode_records(body, 0, False, True, True, MessageExt, bytes_to_host, 1, 2)  # type: ignore[arg-type]
