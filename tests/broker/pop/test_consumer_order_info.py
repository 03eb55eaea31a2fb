"""ConsumerOrderInfoManager: RocketMQ 5's OrderInfo rules (block, counts, commit) and its
``consumerOrderInfo.json`` form (fastjson names of ConsumerOrderInfoManager.OrderInfo)."""

from __future__ import annotations

from pathlib import Path

from rocketq.broker.pop.consumer_order_info import (
    ConsumerOrderInfoManager,
    OrderInfo,
    build_order_count_info,
)
from rocketq.common.extra_info import order_count_of, parse_order_count_info
from rocketq.remoting.protocol import fastjson

T, G = "T", "g"


def test_offsets_are_kept_as_the_first_and_the_distances_from_it() -> None:
    assert OrderInfo.build_offset_list([5]) == [5]
    assert OrderInfo.build_offset_list([5, 6, 9]) == [5, 1, 4]


def test_a_batch_blocks_until_every_message_is_acked_then_commits_past_it(tmp_path: Path) -> None:
    m = ConsumerOrderInfoManager(tmp_path)
    far = 2**60
    m.update(None, T, G, 0, far, 1000, [5, 6, 9])
    assert m.check_block(None, T, G, 0, 1000)
    assert m.commit_and_next(T, G, 0, 6, far) == 5  # the first un-acked offset
    assert m.commit_and_next(T, G, 0, 5, far) == 9
    assert m.commit_and_next(T, G, 0, 7, far) == -1  # not in the batch
    assert m.commit_and_next(T, G, 0, 9, far - 1) == -2  # another pop's handle
    assert m.commit_and_next(T, G, 0, 9, far) == 10
    assert not m.check_block(None, T, G, 0, 1000)


def test_an_expired_batch_does_not_block_and_its_messages_count_once_more(tmp_path: Path) -> None:
    m = ConsumerOrderInfoManager(tmp_path)
    m.update(None, T, G, 0, 1, 1000, [5, 6])  # popped long ago
    assert not m.check_block(None, T, G, 0, 1000)
    counts, smallest = m.update(None, T, G, 0, 2, 1000, [5, 6, 7])
    assert (counts, smallest) == ({5: 1, 6: 1}, 0)
    counts, smallest = m.update(None, T, G, 0, 3, 1000, [5, 6])
    assert (counts, smallest) == ({5: 2, 6: 2}, 2)


def test_the_same_attempt_id_is_not_blocked_and_keeps_the_counts(tmp_path: Path) -> None:
    m = ConsumerOrderInfoManager(tmp_path)
    far = 2**60
    m.update("a1", T, G, 0, far, 1000, [5])
    assert m.check_block("a2", T, G, 0, 1000)
    assert not m.check_block("a1", T, G, 0, 1000)
    assert m.update("a1", T, G, 0, far, 1000, [5]) == ({}, 0)


def test_order_count_info_is_read_back_per_message_then_per_queue() -> None:
    text = build_order_count_info("0", 2, {17: 3}, 0)
    assert text == "0 qo2%17 3;0 2 0"
    counts = parse_order_count_info(text)
    assert order_count_of(counts, T, 2, 17) == 3
    assert order_count_of(counts, T, 2, 18) == 0


def test_the_file_has_rocketmqs_field_names_and_loads_back(tmp_path: Path) -> None:
    m = ConsumerOrderInfoManager(tmp_path)
    m.update("a1", T, G, 3, 1_764_264_000_123, 60_000, [5, 7])
    m.update_next_visible_time(T, G, 3, 7, 1_764_264_000_123, 1_764_264_099_000)
    m.persist()
    path = tmp_path / "config" / "consumerOrderInfo.json"
    obj = fastjson.loads(path.read_text())
    info = obj["table"]["T@g"]["3"] if "3" in obj["table"]["T@g"] else obj["table"]["T@g"][3]
    assert sorted(info) == ["a", "cm", "i", "l", "o", "ot", "popTime"]
    assert (info["a"], info["i"], info["o"], info["popTime"]) == (
        "a1", 60_000, [5, 2], 1_764_264_000_123,
    )  # fmt: skip
    again = ConsumerOrderInfoManager(tmp_path)
    assert again.load()
    assert again.get(T, G, 3) == m.get(T, G, 3)
