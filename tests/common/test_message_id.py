"""Offset msgIds (MessageDecoder#createMessageId) and client UNIQ_KEYs (MessageClientIDSetter)."""

from __future__ import annotations

import itertools
import os
import re
import time

import pytest

from rocketq.common import message_client_id
from rocketq.common.message_client_id import create_uniq_id
from rocketq.common.message_id import create_message_id, decode_message_id
from rocketq.errors import DecodeError


def test_an_ipv4_store_host_gives_a_32_character_id() -> None:
    msg_id = create_message_id(("127.0.0.1", 10911), 472)
    assert msg_id == "7F00000100002A9F00000000000001D8"
    assert decode_message_id(msg_id) == (("127.0.0.1", 10911), 472)


def test_an_ipv6_store_host_gives_a_56_character_id() -> None:
    msg_id = create_message_id(("2001:db8::10", 10911), 1 << 40)
    assert len(msg_id) == 56
    assert msg_id == "20010DB8000000000000000000000010" + "00002A9F" + "0000010000000000"
    assert decode_message_id(msg_id) == (("2001:db8::10", 10911), 1 << 40)


def test_decode_message_id_reads_lower_case_hex() -> None:
    assert decode_message_id("7f00000100002a9f00000000000000d2") == (("127.0.0.1", 10911), 210)


@pytest.mark.parametrize("bad", ["XYZ", "7F000001", "7F00000100002A9F00000000000001D8AA"])
def test_decode_message_id_refuses_bad_ids(bad: str) -> None:
    with pytest.raises(DecodeError):
        decode_message_id(bad)


def test_uniq_id_is_32_upper_hex_characters() -> None:
    uniq = create_uniq_id()
    assert re.fullmatch(r"[0-9A-F]{32}", uniq), uniq


def test_uniq_id_starts_with_the_local_ip_and_the_pid() -> None:
    uniq = create_uniq_id()
    ip_hex = message_client_id._local_ip().hex().upper()
    assert uniq[:8] == ip_hex
    assert int(uniq[8:12], 16) == os.getpid() & 0xFFFF


def test_uniq_ids_share_their_prefix_and_the_counter_increments() -> None:
    ids = [create_uniq_id() for _ in range(5)]
    assert len({i[:20] for i in ids}) == 1
    counters = [int(i[28:], 16) for i in ids]
    assert all((b - a) % 0x10000 == 1 for a, b in itertools.pairwise(counters))
    assert len(set(ids)) == 5


def test_uniq_id_time_field_is_milliseconds_since_the_month_start() -> None:
    before = time.time_ns() // 1_000_000
    uniq = create_uniq_id()
    after = time.time_ns() // 1_000_000
    t = time.localtime(before / 1000)
    month_start = int(time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1)) * 1000)
    diff = int(uniq[20:28], 16)
    assert before - month_start - 1 <= diff <= after - month_start + 1


def test_a_scoped_ipv6_host_is_written_as_its_16_address_bytes() -> None:
    msg_id = create_message_id(("fe80::1%lo", 10911), 0)
    assert msg_id == "FE800000000000000000000000000001" + "00002A9F" + "0" * 16
