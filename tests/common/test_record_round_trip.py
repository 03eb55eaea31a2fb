"""Hypothesis round trips of whole commitlog records through encode_message/decode_message."""

from __future__ import annotations

import ipaddress
import struct

from hypothesis import given
from hypothesis import strategies as st

from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_message, encode_message
from rocketq.common.record_layout import MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, calc_msg_length
from rocketq.testing.strategies import messages


def _same(a: MessageExt, b: MessageExt) -> None:
    assert b.topic == a.topic
    assert b.body == a.body
    assert b.properties == a.properties
    for name in (
        "flag",
        "queue_id",
        "queue_offset",
        "born_timestamp",
        "store_timestamp",
        "commitlog_offset",
        "reconsume_times",
        "prepared_transaction_offset",
    ):
        assert getattr(b, name) == getattr(a, name), name
    assert ipaddress.ip_address(b.born_host[0]) == ipaddress.ip_address(a.born_host[0])
    assert ipaddress.ip_address(b.store_host[0]) == ipaddress.ip_address(a.store_host[0])
    assert (b.born_host[1], b.store_host[1]) == (a.born_host[1], a.store_host[1])
    v6 = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG
    assert b.sys_flag & ~v6 == a.sys_flag & ~v6


@given(messages())
def test_any_record_round_trips_with_a_valid_crc(msg: MessageExt) -> None:
    data = encode_message(msg)
    decoded = decode_message(data, check_crc=True)
    _same(msg, decoded)
    assert decoded.store_size == len(data)
    assert bytes(encode_message(decoded)) == bytes(data)


@given(messages())
def test_host_flags_follow_the_address_families(msg: MessageExt) -> None:
    decoded = decode_message(encode_message(msg))
    born_v6 = ":" in msg.born_host[0]
    store_v6 = ":" in msg.store_host[0]
    assert bool(decoded.sys_flag & MessageSysFlag.BORNHOST_V6_FLAG) == born_v6
    assert bool(decoded.sys_flag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) == store_v6
    assert len(decoded.msg_id) == (56 if store_v6 else 32)


@given(messages(), st.binary(max_size=50))
def test_a_record_decodes_at_an_offset_inside_a_larger_buffer(
    msg: MessageExt, prefix: bytes
) -> None:
    data = prefix + bytes(encode_message(msg)) + b"\0" * 16
    _same(msg, decode_message(memoryview(data), len(prefix), check_crc=True))


@given(messages(topic=st.text("abcdefgh", min_size=128, max_size=400)))
def test_topics_over_127_bytes_use_the_v2_magic_and_a_two_byte_length(msg: MessageExt) -> None:
    data = encode_message(msg)
    assert struct.unpack_from(">I", data, 4)[0] == MESSAGE_MAGIC_CODE_V2
    props_len = len(data) - calc_msg_length(
        decode_message(data).sys_flag, len(msg.body), len(msg.topic), 0, v2=True
    )
    assert props_len >= 0
    _same(msg, decode_message(data, check_crc=True))


@given(messages(topic=st.text("xyz", min_size=1, max_size=127)))
def test_topics_up_to_127_bytes_use_the_v1_magic(msg: MessageExt) -> None:
    data = encode_message(msg)
    assert struct.unpack_from(">I", data, 4)[0] == MESSAGE_MAGIC_CODE
    _same(msg, decode_message(data))
