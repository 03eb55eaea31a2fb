"""MQFaultStrategy / LatencyFaultTolerance: slow or failed brokers are avoided for a while."""

from __future__ import annotations

from rocketq.client.fault import (
    MQFaultStrategy,
    SuspectMasters,
    TopicPublishInfo,
    compute_not_available_duration_ms,
)
from rocketq.common.message import MessageQueue


def info(*brokers: str, queues: int = 2) -> TopicPublishInfo:
    mqs = [MessageQueue("T", b, i) for b in brokers for i in range(queues)]
    return TopicPublishInfo(message_queue_list=mqs, have_topic_router_info=True)


def test_not_available_duration_follows_the_latency_table() -> None:
    assert compute_not_available_duration_ms(10) == 0
    assert compute_not_available_duration_ms(549) == 0
    assert compute_not_available_duration_ms(550) == 30000
    assert compute_not_available_duration_ms(2500) == 120000
    assert compute_not_available_duration_ms(30000) == 600000


def test_round_robin_visits_every_queue_in_turn() -> None:
    strategy = MQFaultStrategy(enabled=False)
    tp = info("a", "b")
    picked = [strategy.select_one_message_queue(tp, None) for _ in range(8)]
    assert set(picked) == set(tp.message_queue_list)
    assert picked[:4] == picked[4:]


def test_a_retry_without_fault_tolerance_avoids_the_broker_that_failed() -> None:
    strategy = MQFaultStrategy(enabled=False)
    tp = info("a", "b")
    assert all(strategy.select_one_message_queue(tp, "a").broker_name == "b" for _ in range(10))


def test_a_broker_that_failed_is_avoided_during_its_back_off() -> None:
    strategy = MQFaultStrategy(enabled=True)
    tp = info("a", "b")
    strategy.update_fault_item("a", 5, isolation=True)
    assert {strategy.select_one_message_queue(tp, None).broker_name for _ in range(20)} == {"b"}


def test_a_fast_answer_keeps_the_broker_available() -> None:
    strategy = MQFaultStrategy(enabled=True)
    tp = info("a", "b")
    strategy.update_fault_item("a", 20, isolation=False)
    assert {strategy.select_one_message_queue(tp, None).broker_name for _ in range(20)} == {
        "a",
        "b",
    }


def test_when_every_broker_is_bad_one_is_still_picked() -> None:
    strategy = MQFaultStrategy(enabled=True)
    tp = info("a", "b")
    strategy.update_fault_item("a", 5, isolation=True)
    strategy.update_fault_item("b", 5, isolation=True)
    picked = strategy.select_one_message_queue(tp, None)
    assert picked in tp.message_queue_list


def test_suspect_masters_name_the_address_that_failed_until_cleared() -> None:
    suspects = SuspectMasters()
    assert not suspects  # the hot path tests this and nothing else
    suspects.suspect("broker-a", "127.0.0.1:1")
    assert suspects
    assert suspects.is_suspect("broker-a", "127.0.0.1:1")
    assert not suspects.is_suspect("broker-a", "127.0.0.1:2")  # the route moved: a new master
    assert not suspects.is_suspect("broker-b", "127.0.0.1:1")
    suspects.clear("broker-a")
    assert not suspects.is_suspect("broker-a", "127.0.0.1:1")
    assert not suspects
