"""The broker's side of a timer send, on a real store: HookUtils.handleScheduleMessage's rules
(a delay level wins, a half is left alone, a timer goes to rmq_sys_wheel_timer with its slot,
a store without the wheel refuses), SendMessageProcessor's recall handle and remarks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.broker.processors.send_kinds import apply_timer, recall_handle_of
from rocketq.broker.processors.send_results import STATUS_TO_RESPONSE, timer_remark
from rocketq.broker.send_properties import pass_through
from rocketq.common import message_const as mc
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.recall_message_handle import decode_handle
from rocketq.response_code import ResponseCode
from rocketq.store import MessageStore
from rocketq.store.results import PutMessageStatus
from rocketq.testing.store import new_msg, open_store

NOW = 1_800_000_000_000


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MessageStore]:
    s = open_store(tmp_path, timer_precision_ms=1000, timer_max_delay_sec=60, clock_ms=lambda: NOW)
    yield s
    s.shutdown()


def test_a_timer_goes_to_the_wheel_topic_with_its_slot_and_real_queue(store: MessageStore) -> None:
    msg = new_msg("Orders", 3, properties={mc.PROPERTY_TIMER_DELIVER_MS: str(NOW + 5000)})
    assert apply_timer(msg, store) is None
    assert (msg.topic, msg.queue_id) == ("rmq_sys_wheel_timer", 0)
    assert msg.properties[mc.PROPERTY_TIMER_OUT_MS] == str(NOW + 4000)  # exact: a tick earlier
    assert msg.properties[mc.PROPERTY_REAL_TOPIC] == "Orders"
    assert msg.properties[mc.PROPERTY_REAL_QUEUE_ID] == "3"
    inside = new_msg("Orders", properties={mc.PROPERTY_TIMER_DELAY_MS: "1500"})
    assert apply_timer(inside, store) is None
    assert inside.properties[mc.PROPERTY_TIMER_OUT_MS] == str(NOW + 1000)  # floored


def test_a_delay_level_wins_and_a_half_or_a_past_time_stays(store: MessageStore) -> None:
    level = new_msg("Orders", properties={"DELAY": "2", mc.PROPERTY_TIMER_DELAY_SEC: "5"})
    assert apply_timer(level, store) is None
    assert level.topic == "Orders"
    assert mc.PROPERTY_TIMER_DELAY_SEC not in level.properties  # cleared, as Java
    half = new_msg("Orders", properties={mc.PROPERTY_TIMER_DELAY_SEC: "5"})
    half.sys_flag = MessageSysFlag.TRANSACTION_PREPARED_TYPE
    assert apply_timer(half, store) is None
    assert half.topic == "Orders"
    past = new_msg("Orders", properties={mc.PROPERTY_TIMER_DELIVER_MS: str(NOW - 1)})
    assert apply_timer(past, store) is None
    assert past.topic == "Orders"  # delivered at once


def test_bad_timers_are_refused_with_the_timer_statuses(store: MessageStore) -> None:
    for props in (
        {mc.PROPERTY_TIMER_DELIVER_MS: "tomorrow"},
        {mc.PROPERTY_TIMER_DELAY_SEC: "61"},
        {mc.PROPERTY_TIMER_DELIVER_MS: str(NOW - 1), mc.PROPERTY_TIMER_DEL_UNIQKEY: "T+K"},
    ):
        assert apply_timer(new_msg("Orders", properties=props), store) is (
            PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL
        )
    assert STATUS_TO_RESPONSE[PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL][0] == (
        ResponseCode.MESSAGE_ILLEGAL
    )
    remark = timer_remark(PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL, store.config)
    assert remark == (
        "timer message illegal, the delay time should not be bigger than the max delay 60000ms;"
        " or if set del msg, the delay time should be bigger than the current time"
    )


def test_a_store_without_the_wheel_refuses_naming_the_key(tmp_path: Path) -> None:
    store = open_store(tmp_path, timer_wheel_enable=False)
    try:
        msg = new_msg("Orders", properties={mc.PROPERTY_TIMER_DELAY_SEC: "1"})
        status = apply_timer(msg, store)
        assert status is PutMessageStatus.WHEEL_TIMER_NOT_ENABLE
        assert STATUS_TO_RESPONSE[status][0] == ResponseCode.SYSTEM_ERROR
        assert timer_remark(status, store.config) == (
            "accurate timer message is not enabled, timerWheelEnable is false"
        )
        assert not (tmp_path / "timerwheel").exists()
    finally:
        store.shutdown()


def test_the_recall_handle_names_the_real_topic_the_broker_and_the_slot_plus_one(
    store: MessageStore,
) -> None:
    msg = new_msg(
        "Orders",
        properties={
            mc.PROPERTY_TIMER_DELIVER_MS: str(NOW + 5000),
            mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: "7F00000100",
        },
    )
    assert recall_handle_of(msg, "broker-a") is None  # not a timer yet
    apply_timer(msg, store)
    handle = recall_handle_of(msg, "broker-a")
    assert handle is not None
    parts = decode_handle(handle)
    assert (parts.topic, parts.broker_name, parts.message_id) == (
        "Orders",
        "broker-a",
        "7F00000100",
    )
    assert parts.timestamp_str == str(NOW + 4001)


def test_a_timer_send_takes_the_map_path_not_the_pass_through() -> None:
    for name in (
        mc.PROPERTY_TIMER_DELIVER_MS,
        mc.PROPERTY_TIMER_DELAY_SEC,
        mc.PROPERTY_TIMER_DELAY_MS,
    ):
        assert pass_through(f"{name}\x011\x02", "DefaultCluster") is None
    assert pass_through("KEYS\x01k\x02", "DefaultCluster") is not None
