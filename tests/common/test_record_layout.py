"""The commitlog record layout module against RocketMQ's field order and against the codec."""

from __future__ import annotations

import pytest
from hypothesis import given

from rocketq.common import record_layout as rl
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_message, encode_message
from rocketq.errors import DecodeError
from rocketq.testing.strategies import messages

BORN_V6 = MessageSysFlag.BORNHOST_V6_FLAG
STORE_V6 = MessageSysFlag.STOREHOSTADDRESS_V6_FLAG


def test_field_positions_are_the_documented_ones() -> None:
    assert (rl.MAGIC_CODE_POSITION, rl.BODY_CRC_POSITION, rl.QUEUE_ID_POSITION) == (4, 8, 12)
    assert (rl.FLAG_POSITION, rl.QUEUE_OFFSET_POSITION, rl.PHYSICAL_OFFSET_POSITION) == (16, 20, 28)
    assert (rl.SYSFLAG_POSITION, rl.BORN_TIMESTAMP_POSITION, rl.BORN_HOST_POSITION) == (36, 40, 48)
    assert rl.MIN_RECORD_SIZE == 91


@pytest.mark.parametrize(
    ("sys_flag", "store_ts", "body_length", "fixed"),
    [
        (0, 56, 84, 88),
        (BORN_V6, 68, 96, 100),
        (STORE_V6, 56, 96, 100),
        (BORN_V6 | STORE_V6, 68, 108, 112),
    ],
)
def test_host_widths_move_every_later_field(
    sys_flag: int, store_ts: int, body_length: int, fixed: int
) -> None:
    assert rl.store_timestamp_position(sys_flag) == store_ts
    assert rl.body_length_position(sys_flag) == body_length
    assert rl.fixed_size(sys_flag) == fixed
    assert rl.calc_msg_length(sys_flag, 0, 0, 0) == fixed + 3


@given(messages())
def test_unpack_fixed_and_the_tail_walk_agree_with_the_decoder(msg: MessageExt) -> None:
    record = bytes(encode_message(msg))
    head = rl.HEAD_STRUCT.unpack_from(record)
    fixed, body_pos = rl.unpack_fixed(record, 0, head[7])
    decoded = decode_message(record)
    assert fixed[:9] == head
    assert fixed[10] == decoded.store_timestamp
    assert fixed[14] == len(decoded.body)
    assert body_pos == rl.fixed_size(head[7])
    topic_pos, topic_len, props_pos, _ = rl.locate_topic_and_properties(
        record, 0, body_pos + fixed[14], head[1], len(record)
    )
    assert record[topic_pos : topic_pos + topic_len].decode() == decoded.topic
    assert props_pos <= len(record)


def test_a_tail_that_disagrees_with_totalsize_says_so() -> None:
    record = bytearray(encode_message(MessageExt(topic="T", body=b"abc")))
    record += b"\0"  # one byte more than the properties account for
    body_end = rl.FIXED_V4_SIZE + 3
    with pytest.raises(DecodeError, match="PROPERTIESLENGTH 0 disagrees with TOTALSIZE"):
        rl.locate_topic_and_properties(record, 0, body_end, rl.MESSAGE_MAGIC_CODE, len(record))
