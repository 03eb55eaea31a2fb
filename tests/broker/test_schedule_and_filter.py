from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.broker import BrokerConfig, BrokerController
from rocketq.broker.filter import ExpressionMessageFilter, to_int32
from rocketq.broker.schedule import ScheduleMessageService, parse_delay_levels
from rocketq.remoting.protocol.subscription import SubscriptionData


def test_delay_levels_parse_like_rocketmq() -> None:
    table = parse_delay_levels()
    assert len(table) == 18
    assert (table[1], table[3], table[5], table[18]) == (1000, 10_000, 60_000, 7_200_000)
    assert parse_delay_levels("2s 1d") == {1: 2000, 2: 86_400_000}
    with pytest.raises(ValueError, match="3x"):
        parse_delay_levels("1s 3x")


def test_delay_offsets_persist_with_bare_integer_keys(tmp_path: Path) -> None:
    controller = BrokerController(BrokerConfig(store_path_root_dir=str(tmp_path)))
    service = ScheduleMessageService(controller)
    service.offset_table = {3: 5, 1: 17}
    service.persist()
    text = (tmp_path / "config" / "delayOffset.json").read_text()
    assert text == '{\n\t"offsetTable":{1:17,3:5\n\t}\n}'
    again = ScheduleMessageService(controller)
    assert again.load()
    assert again.offset_table == {1: 17, 3: 5}


def test_consume_queue_filter_compares_int32_tag_codes() -> None:
    tag_a = 2598919  # "TagA".hashCode()
    negative = -880646131  # "tag-中文".hashCode()
    sub = SubscriptionData(
        topic="T", sub_string="TagA || x", tags_set=["TagA", "x"], code_set=[tag_a, negative]
    )
    f = ExpressionMessageFilter(sub)
    assert f.is_matched_by_consume_queue(tag_a)
    assert f.is_matched_by_consume_queue(negative & 0xFFFFFFFFFFFFFFFF)  # read back as unsigned
    assert not f.is_matched_by_consume_queue(0)
    assert f.is_matched_by_commit_log(b"the record is not read for a tag filter")
    assert to_int32(0xFFFFFFFF) == -1


def test_star_and_missing_subscription_match_everything() -> None:
    for f in (ExpressionMessageFilter(None), ExpressionMessageFilter(SubscriptionData(topic="T"))):
        assert f.matches_all
        assert f.is_matched_by_consume_queue(12345)
        assert f.is_matched_by_commit_log(b"")


def test_a_delay_level_above_the_configured_levels_waits_the_last_level() -> None:
    from rocketq.broker.processors.send import SendMessageProcessor
    from rocketq.common import message_const as mc
    from rocketq.common.message import MessageExt
    from rocketq.common.topic import SCHEDULE_TOPIC

    msg = MessageExt(topic="Orders", body=b"x", queue_id=3)
    msg.properties[mc.PROPERTY_DELAY_TIME_LEVEL] = "7"
    SendMessageProcessor.apply_delay(msg, max_level=2)  # messageDelayLevel=1s 3s
    assert (msg.topic, msg.queue_id) == (SCHEDULE_TOPIC, 1)  # queue of level 2, delivered
    assert msg.properties[mc.PROPERTY_DELAY_TIME_LEVEL] == "2"
    assert msg.properties[mc.PROPERTY_REAL_TOPIC] == "Orders"
    assert msg.properties[mc.PROPERTY_REAL_QUEUE_ID] == "3"


def test_the_delay_service_sleeps_until_the_first_head_is_due_and_at_most_the_shortest_delay(
    tmp_path: Path,
) -> None:
    controller = BrokerController(BrokerConfig(store_path_root_dir=str(tmp_path)))
    service = ScheduleMessageService(controller)  # levels 1s 5s ...: the shortest is 1 s
    now = 1_800_000_000_000
    assert service.idle_wait_s(now) == 1.0  # a message stored meanwhile is due after it
    service._next_due_ms = now + 250  # a head that comes due in 250 ms
    assert service.idle_wait_s(now) == 0.25
    service._next_due_ms = now - 5  # overdue (its round failed): at once
    assert service.idle_wait_s(now) == 0.001
    service.delay_level_table = parse_delay_levels("2s 1m")
    service._next_due_ms = None
    assert service.idle_wait_s(now) == 1.0  # never more than a second
