"""The official RocketMQ 5 Python client (rocketmq-python-client 5.1.2, in its own venv, in a
subprocess per scenario) against rocketq's gRPC endpoint: one broker for the module, each case
on topics and groups of its own (``rmq5_driver.py`` holds the client side of each)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rocketq.common.message_decoder import decode_message
from tests.interop.rmq5_env import RETRY_ONCE_FAST, Rmq5Env, rmq5_env
from tests.interop.rmq5_runner import needs_rmq5, of

pytestmark = [pytest.mark.interop, needs_rmq5, pytest.mark.timeout(90)]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rmq5Env]:
    with rmq5_env(tmp_path_factory.mktemp("rmq5")) as running:
        yield running


def bodies(events: list[dict[str, object]], kind: str = "received") -> list[object]:
    return [e["body"] for e in of(events, kind)]


def test_sync_and_async_sends_arrive_intact_and_acked(env: Rmq5Env) -> None:
    topic, group = env.topic("Rmq5Send"), env.group("rmq5-send")
    events = env.drive("send_receive", "--topic", topic, "--group", group, "--count", "3")
    assert not of(events, "error"), events
    sent = {e["body"]: e["message_id"] for e in of(events, "sent")}
    got = {e["body"]: e for e in of(events, "received")}
    assert set(got) == set(sent) == {f"{k}-{i}" for k in ("sync", "async") for i in range(3)}
    for body, msg in got.items():
        kind, i = body.split("-")
        assert msg["message_id"] == sent[body]
        assert msg["topic"] == topic
        assert msg["tag"] == ("TagS" if kind == "sync" else "TagA")
        assert msg["keys"] == [("key-" if kind == "sync" else "akey-") + i]
        assert msg["properties"]["n"] == i
        assert msg["delivery_attempt"] == 1
        assert not msg["corrupted"]  # the MD5 digest matched the body
    assert of(events, "after_ack") == [pytest.approx(of(events, "after_ack")[0])]
    assert of(events, "after_ack")[0]["count"] == 0


def test_tag_and_sql92_filters(env: Rmq5Env) -> None:
    topic = env.topic("Rmq5Filter")
    env.group("rmq5-filter-tag")
    env.group("rmq5-filter-sql")
    events = env.drive("filters", "--topic", topic, "--group", "rmq5-filter")
    assert not of(events, "error"), events
    assert of(events, "tag_filter")[0]["bodies"] == ["m-0", "m-2", "m-4"]
    assert of(events, "sql_filter")[0]["bodies"] == ["m-4", "m-5"]


def test_invisible_time_redelivery_and_changes_both_ways(env: Rmq5Env) -> None:
    topic, group = env.topic("Rmq5Invisible"), env.group("rmq5-invisible")
    events = env.drive("invisible", "--topic", topic, "--group", group, timeout_s=80)
    assert not of(events, "error"), events
    first = {e["body"]: e for e in of(events, "received")[:3]}
    assert set(first) == {"expire", "shorten", "lengthen"}
    again = {e["body"]: e for e in of(events, "received")[3:]}
    assert set(again) == {"expire", "shorten"}  # "lengthen" stays hidden for its 60 s
    assert again["expire"]["delivery_attempt"] == 2
    assert again["shorten"]["delivery_attempt"] == 2
    changed_at = of(events, "changed")[0]["t_ms"]
    assert again["shorten"]["t_ms"] - changed_at < 8_000  # back well before its first 10 s
    assert again["expire"]["t_ms"] - first["expire"]["t_ms"] >= 10_000
    assert of(events, "acked") == [pytest.approx(of(events, "acked")[0])]


def test_fifo_order_per_message_group_with_the_next_held_back(env: Rmq5Env) -> None:
    topic = env.topic("Rmq5Fifo", "FIFO", queues=2)
    group = env.group("rmq5-fifo", "-o", "true")
    events = env.drive("fifo", "--topic", topic, "--group", group, timeout_s=80)
    assert not of(events, "error"), events
    got = [str(b) for b in bodies(events)]
    for name in ("g1", "g2"):
        assert [b for b in got if b.startswith(name)] == [f"{name}-{i}" for i in range(4)]
    for received, held in zip(of(events, "received"), of(events, "while_in_flight"), strict=True):
        mine = str(received["body"]).split("-")[0]
        assert not [b for b in held["bodies"] if b.startswith(mine)], (received, held)


def test_delay_not_before_its_time_and_recall(env: Rmq5Env) -> None:
    topic, group = env.topic("Rmq5Delay", "DELAY"), env.group("rmq5-delay")
    events = env.drive("delay_recall", "--topic", topic, "--group", group)
    assert not of(events, "error"), events
    due = {e["body"]: e["due_ms"] for e in of(events, "sent")}
    got = {e["body"]: e for e in of(events, "received")}
    assert set(got) == {"due-2", "due-4"}  # the recalled one never comes
    for body, msg in got.items():
        assert msg["t_ms"] >= due[body], (body, msg["t_ms"] - due[body])
        assert msg["delivery_timestamp"] == due[body]
    assert of(events, "recalled")[0]["message_id"]


def test_transaction_commit_rollback_and_the_check_through_telemetry(env: Rmq5Env) -> None:
    topic, group = env.topic("Rmq5Tx", "TRANSACTION"), env.group("rmq5-tx")
    events = env.drive("transaction", "--topic", topic, "--group", group)
    assert not of(events, "error"), events
    assert all(e["transaction_id"] for e in of(events, "sent"))
    assert sorted(str(b) for b in bodies(events)) == ["commit", "open"]
    assert [e["body"] for e in of(events, "checked")][:1] == ["open"]
    assert of(events, "after")[0]["count"] == 0


def test_unknown_topic_and_type_mismatch_are_refused(env: Rmq5Env) -> None:
    topic = env.topic("Rmq5Refuse")
    events = env.drive("refusals", "--topic", topic)
    refused = {e["case"]: e["error"] for e in of(events, "refused")}
    assert not of(events, "sent"), events
    assert set(refused) == {"unknown_topic", "type_mismatch"}
    assert "route" in refused["unknown_topic"] or "40402" in refused["unknown_topic"]
    assert "FIFO" in refused["type_mismatch"] or "40014" in refused["type_mismatch"]


def test_max_attempts_end_in_the_dead_letter_queue(env: Rmq5Env) -> None:
    topic = env.topic("Rmq5Dlq")
    group = env.group("rmq5-dlq", "-r", "1", "-p", RETRY_ONCE_FAST)
    events = env.drive("dead_letter", "--topic", topic, "--group", group, "--deadline", "20")
    assert not of(events, "error"), events
    assert [e["delivery_attempt"] for e in of(events, "received")] == [1, 2]
    assert dead_letters(env, group) == ["doomed"]


def test_a_push_consumer_with_a_failing_listener_ends_in_the_dead_letter_queue(
    env: Rmq5Env,
) -> None:
    topic = env.topic("Rmq5Push")
    group = env.group("rmq5-push", "-r", "1", "-p", RETRY_ONCE_FAST)
    events = env.drive("push_failing", "--topic", topic, "--group", group, "--deadline", "8")
    assert not of(events, "error"), events
    assert [e["delivery_attempt"] for e in of(events, "consumed")] == [1, 2]
    assert dead_letters(env, group) == ["fails"]


def dead_letters(env: Rmq5Env, group: str) -> list[str]:
    """The bodies in ``%DLQ%<group>`` (one queue), read from the broker's store."""
    result = env.broker.message_store.get_message("t", f"%DLQ%{group}", 0, 0, 32)
    return [decode_message(b).body.decode() for b in result.message_buffers]
