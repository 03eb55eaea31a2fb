"""The commitlog record codec against the golden vectors of rocketq.testing.vectors."""

from __future__ import annotations

import struct
import zlib

import pytest

from rocketq.common.message_decoder import body_crc, decode_message, decode_messages, encode_message
from rocketq.common.message_id import create_message_id
from rocketq.common.record_layout import MESSAGE_MAGIC_CODE
from rocketq.errors import DecodeError
from rocketq.testing.vectors import OFFSET_MSG_IDS, OFFSETS, SIZES, UNIQ_KEYS, message, record

ALL = [1, 2, 3]


@pytest.mark.parametrize("n", ALL)
def test_encode_message_reproduces_each_vector_byte_for_byte(n: int) -> None:
    assert bytes(encode_message(message(n))) == record(n)


@pytest.mark.parametrize("n", ALL)
def test_encoded_vector_has_the_documented_total_size(n: int) -> None:
    data = record(n)
    assert len(data) == SIZES[n]
    assert struct.unpack_from(">i", data, 0)[0] == SIZES[n]


def test_vector_one_decodes_field_by_field() -> None:
    msg = decode_message(record(1), check_crc=True)
    assert msg.store_size == 210
    assert msg.body_crc == 1774740973
    assert (msg.topic, msg.queue_id, msg.queue_offset, msg.commitlog_offset) == (
        "TopicTest",
        3,
        0,
        0,
    )
    assert (msg.flag, msg.sys_flag, msg.reconsume_times, msg.prepared_transaction_offset) == (
        0,
        0,
        0,
        0,
    )
    assert msg.born_timestamp == 1700000000000
    assert msg.born_host == ("127.0.0.1", 54321)
    assert msg.store_timestamp == 1700000000123
    assert msg.store_host == ("127.0.0.1", 10911)
    assert msg.body == b"Hello RocketMQ"
    assert msg.properties == {
        "UNIQ_KEY": UNIQ_KEYS[1],
        "CLUSTER": "DefaultCluster",
        "TAGS": "TagA",
        "KEYS": "k1 k2",
        "WAIT": "true",
    }
    assert msg.tags == "TagA"
    assert msg.keys == ["k1", "k2"]


def test_vector_two_decodes_with_its_masked_crc_and_delay_properties() -> None:
    msg = decode_message(record(2), check_crc=True)
    assert msg.store_size == 262
    assert msg.body_crc == 1250039395 == 0xCA821663 & 0x7FFFFFFF
    assert (msg.topic, msg.queue_id, msg.queue_offset, msg.commitlog_offset) == (
        "SCHEDULE_TOPIC_XXXX",
        2,
        0,
        210,
    )
    assert msg.born_timestamp == 1700000005000
    assert msg.store_timestamp == 1700000005050
    assert msg.body == b"Hello RocketMQ 2"
    assert msg.delay_time_level == 3
    assert msg.properties["REAL_TOPIC"] == "TopicTest"
    assert msg.properties["REAL_QID"] == "3"
    assert list(msg.properties) == [
        "UNIQ_KEY",
        "CLUSTER",
        "DELAY",
        "TAGS",
        "KEYS",
        "WAIT",
        "REAL_TOPIC",
        "REAL_QID",
    ]


def test_vector_three_decodes_an_ipv6_born_host_and_a_negative_tag_hash() -> None:
    msg = decode_message(record(3), check_crc=True)
    assert msg.store_size == 226
    assert msg.sys_flag == 0x10
    assert msg.body_crc == 1032136437
    assert msg.born_host == ("2001:db8::10", 54322)
    assert msg.born_timestamp == 1700000012000
    assert msg.store_timestamp == 1700000012077
    assert msg.store_host == ("127.0.0.1", 10911)
    assert (msg.queue_id, msg.queue_offset, msg.commitlog_offset) == (3, 1, 472)
    assert msg.body == b"Hello RocketMQ 3"
    assert msg.tags == "TagCancel"
    assert msg.uniq_key == UNIQ_KEYS[3]


@pytest.mark.parametrize("n", ALL)
def test_decoded_vector_carries_its_offset_msg_id(n: int) -> None:
    msg = decode_message(record(n))
    assert msg.msg_id == OFFSET_MSG_IDS[n]
    assert msg.offset_msg_id == OFFSET_MSG_IDS[n]
    assert create_message_id(("127.0.0.1", 10911), OFFSETS[n]) == OFFSET_MSG_IDS[n]


def test_the_three_vectors_back_to_back_decode_at_their_offsets() -> None:
    data = record(1) + record(2) + record(3)
    for n in ALL:
        assert decode_message(data, OFFSETS[n]).commitlog_offset == OFFSETS[n]
    assert [m.queue_offset for m in decode_messages(data)] == [0, 0, 1]


def test_body_crc_masks_the_top_bit_and_is_zero_for_an_empty_body() -> None:
    assert body_crc(b"Hello RocketMQ") == 0x69C865ED
    assert body_crc(b"Hello RocketMQ 3") == 0x3D8526F5
    assert body_crc(b"") == 0


def test_decode_without_reading_the_body_leaves_it_empty() -> None:
    msg = decode_message(record(1), read_body=False)
    assert msg.body == b""
    assert msg.topic == "TopicTest"


# ---------------------------------------------------------------------- errors


def _in_buffer(data: bytes | bytearray, at: int = 100) -> bytearray:
    return bytearray(b"\xee" * at) + bytearray(data)


def test_bad_magic_raises_decode_error_at_the_record_offset() -> None:
    data = bytearray(record(1))
    data[4:8] = b"\x00\x00\x00\x01"
    with pytest.raises(DecodeError, match="bad magic") as info:
        decode_message(_in_buffer(data), 100)
    assert info.value.offset == 100


def test_a_truncated_record_raises_decode_error() -> None:
    with pytest.raises(DecodeError) as short:
        decode_message(_in_buffer(record(1)[:60]), 100)
    assert short.value.offset == 100
    with pytest.raises(DecodeError, match="TOTALSIZE 210") as cut:
        decode_message(_in_buffer(record(1)[:200]), 100)
    assert cut.value.offset == 100


def test_a_flipped_body_byte_fails_the_crc_check_only_when_asked() -> None:
    data = bytearray(record(2))
    data[90] ^= 0x01
    with pytest.raises(DecodeError, match="CRC") as info:
        decode_message(_in_buffer(data, 210), 210, check_crc=True)
    assert info.value.offset == 210
    assert "210" in str(info.value)
    assert decode_message(data, check_crc=False).body_crc == 1250039395


def test_a_total_size_that_disagrees_with_the_fields_raises_decode_error() -> None:
    data = bytearray(record(1)) + b"\0\0\0\0"
    struct.pack_into(">i", data, 0, 214)
    with pytest.raises(DecodeError, match="PROPERTIESLENGTH") as info:
        decode_message(_in_buffer(data, 472), 472)
    assert info.value.offset == 472


def test_a_total_size_below_the_minimum_raises_decode_error() -> None:
    data = bytearray(record(1))
    struct.pack_into(">i", data, 0, 50)
    with pytest.raises(DecodeError, match="TOTALSIZE 50"):
        decode_message(data)


def test_a_body_length_past_the_record_end_raises_decode_error() -> None:
    data = bytearray(record(1))
    struct.pack_into(">i", data, 84, 500)
    with pytest.raises(DecodeError, match="BODYLENGTH 500"):
        decode_message(data, check_crc=False)


def test_the_v1_magic_is_used_for_short_topics() -> None:
    assert struct.unpack_from(">I", record(1), 4)[0] == MESSAGE_MAGIC_CODE


APPENDIX_HEX = (
    "000000e6daa320a769c865ed00000003000000000000000000000000000000000000000000000000"
    "0000018bcfe568007f0000010000d4310000018bcfe5687b7f00000100002a9f0000000000000000"
    "000000000000000e48656c6c6f20526f636b65744d5109546f706963546573740074554e49515f4b"
    "455901374630303030303133303339314236443335383634374237363030303030303002434c5553"
    "5445520144656661756c74436c757374657202544147530154616741024b455953016b31206b3202"
    "574149540174727565025f5f435243333223013733343139363237313102"
)


def test_the_appended_properties_crc_vector_decodes_and_encodes() -> None:
    """The vectors' appendix: V1 with enabledAppendPropCRC (a __CRC32# property)."""
    data = bytes.fromhex(APPENDIX_HEX)
    msg = decode_message(data, check_crc=True)
    assert msg.store_size == 230
    assert msg.properties["__CRC32#"] == "7341962711"
    assert int(msg.properties["__CRC32#"][::-1]) == 1172691437
    assert zlib.crc32(data[:210]) & 0x7FFFFFFF == 1172691437
    assert bytes(encode_message(msg)) == data
