"""The official RocketMQ 5 Python client (rocketmq-python-client 5.1.2, in its own venv, in a
subprocess per scenario) against rocketq's gRPC endpoint: one broker for the module, each case
on topics and groups of its own (``rmq5_driver.py`` holds the client side of each)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from rocketq.common.message_decoder import decode_message
from tests.interop.rmq5_env import RETRY_ONCE_FAST, Rmq5Env, rmq5_env
from tests.interop.rmq5_runner import needs_rmq5, of

pytestmark = [pytest.mark.interop, needs_rmq5, pytest.mark.timeout(120)]
Runs = dict[str, Future[list[dict[str, Any]]]]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rmq5Env]:
    with rmq5_env(tmp_path_factory.mktemp("rmq5")) as running:
        yield running


def scenarios(env: Rmq5Env) -> dict[str, tuple[str, ...]]:
    """Each scenario's driver arguments, its topics and groups made first."""
    retry_once = ("-r", "1", "-p", RETRY_ONCE_FAST)
    env.group("rmq5-filter-tag")
    env.group("rmq5-filter-sql")
    return {
        "send_receive": ("--topic", env.topic("Rmq5Send"), "--group", env.group("rmq5-send")),
        "filters": ("--topic", env.topic("Rmq5Filter"), "--group", "rmq5-filter"),
        "invisible": (
            "--topic", env.topic("Rmq5Invisible"), "--group", env.group("rmq5-invisible"),
        ),
        "fifo": (
            "--topic", env.topic("Rmq5Fifo", "FIFO", queues=2),
            "--group", env.group("rmq5-fifo", "-o", "true"),
        ),
        "delay_recall": (
            "--topic", env.topic("Rmq5Delay", "DELAY"), "--group", env.group("rmq5-delay"),
        ),
        "transaction": (
            "--topic", env.topic("Rmq5Tx", "TRANSACTION"), "--group", env.group("rmq5-tx"),
        ),
        "refusals": ("--topic", env.topic("Rmq5Refuse")),
        "dead_letter": (
            "--topic", env.topic("Rmq5Dlq"), "--group", env.group("rmq5-dlq", *retry_once),
            "--deadline", "20",
        ),
        "push_failing": (
            "--topic", env.topic("Rmq5Push"), "--group", env.group("rmq5-push", *retry_once),
            "--count", "2", "--deadline", "15",
        ),
    }  # fmt: skip


@pytest.fixture(scope="module")
def runs(env: Rmq5Env) -> Iterator[Runs]:
    """Every scenario started at once (each a client process of its own; they wait on
    invisible times and timers, not on CPU), so the module takes about its longest case."""
    with ThreadPoolExecutor(max_workers=len(SCENARIO_NAMES)) as pool:
        yield {
            name: pool.submit(env.drive, name, *args, timeout_s=RUN_TIMEOUT_S)
            for name, args in scenarios(env).items()
        }


SCENARIO_NAMES = (
    "send_receive", "filters", "invisible", "fifo", "delay_recall", "transaction", "refusals",
    "dead_letter", "push_failing",
)  # fmt: skip
RUN_TIMEOUT_S = 60.0


def events_of(runs: Runs, name: str) -> list[dict[str, Any]]:
    return runs[name].result(RUN_TIMEOUT_S + 10)


def bodies(events: list[dict[str, object]], kind: str = "received") -> list[object]:
    return [e["body"] for e in of(events, kind)]


def test_sync_and_async_sends_arrive_intact_and_acked(runs: Runs) -> None:
    events, topic = events_of(runs, "send_receive"), "Rmq5Send"
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
    assert [e["count"] for e in of(events, "after_ack")] == [0]  # every one was acked


def test_tag_and_sql92_filters(runs: Runs) -> None:
    events = events_of(runs, "filters")
    assert not of(events, "error"), events
    assert of(events, "tag_filter")[0]["bodies"] == ["m-0", "m-2", "m-4"]
    assert of(events, "sql_filter")[0]["bodies"] == ["m-4", "m-5"]


def test_invisible_time_redelivery_and_changes_both_ways(runs: Runs) -> None:
    events = events_of(runs, "invisible")
    assert not of(events, "error"), events
    first = {e["body"]: e for e in of(events, "received")[:3]}
    assert set(first) == {"expire", "shorten", "lengthen"}, events
    again = {e["body"]: e for e in of(events, "received")[3:]}
    assert set(again) == {"expire", "shorten"}, events  # "lengthen" stays hidden for 60 s
    assert again["expire"]["delivery_attempt"] == 2, events
    assert again["shorten"]["delivery_attempt"] == 2, events
    changed_at = of(events, "changed")[0]["t_ms"]
    assert again["shorten"]["t_ms"] - changed_at < 8_000, events  # well before its 10 s
    assert again["expire"]["t_ms"] - first["expire"]["asked_ms"] >= 10_000, events
    assert len(of(events, "acked")) == 1, events  # with the handle the change returned


def test_fifo_order_per_message_group_with_the_next_held_back(runs: Runs) -> None:
    events = events_of(runs, "fifo")
    assert not of(events, "error"), events
    got = [str(b) for b in bodies(events)]
    for name in ("g1", "g2"):
        assert [b for b in got if b.startswith(name)] == [f"{name}-{i}" for i in range(4)]
    first, held = of(events, "received")[0], of(events, "while_in_flight")[0]
    mine = str(first["body"]).split("-")[0]
    assert not [b for b in held["bodies"] if b.startswith(mine)], (first, held)


def test_delay_not_before_its_time_and_recall(runs: Runs) -> None:
    events = events_of(runs, "delay_recall")
    assert not of(events, "error"), events
    due = {e["body"]: e["due_ms"] for e in of(events, "sent")}
    got = {e["body"]: e for e in of(events, "received")}
    assert set(got) == {"due-early", "due-late"}, events  # the recalled one never comes
    for body, msg in got.items():
        assert msg["t_ms"] >= due[body], (body, msg["t_ms"] - due[body])
        assert msg["delivery_timestamp"] == due[body]
    assert of(events, "recalled")[0]["message_id"]


def test_transaction_commit_rollback_and_the_check_through_telemetry(runs: Runs) -> None:
    events = events_of(runs, "transaction")
    assert not of(events, "error"), events
    assert all(e["transaction_id"] for e in of(events, "sent"))
    assert sorted(str(b) for b in bodies(events)) == ["commit", "open"]
    assert "open" in [e["body"] for e in of(events, "checked")], events
    assert of(events, "after")[0]["count"] == 0


def test_unknown_topic_and_type_mismatch_are_refused(runs: Runs) -> None:
    events = events_of(runs, "refusals")
    refused = {e["case"]: e["error"] for e in of(events, "refused")}
    assert not of(events, "sent"), events
    assert set(refused) == {"unknown_topic", "type_mismatch"}
    assert "route" in refused["unknown_topic"] or "40402" in refused["unknown_topic"]
    assert "FIFO" in refused["type_mismatch"] or "40014" in refused["type_mismatch"]


def test_max_attempts_end_in_the_dead_letter_queue(env: Rmq5Env, runs: Runs) -> None:
    events, group = events_of(runs, "dead_letter"), "rmq5-dlq"
    assert not of(events, "error"), events
    assert [e["delivery_attempt"] for e in of(events, "received")] == [1, 2]
    assert until_dead_letters(env, group) == ["doomed"]


def test_a_push_consumer_with_a_failing_listener_ends_in_the_dead_letter_queue(
    env: Rmq5Env, runs: Runs
) -> None:
    events, group = events_of(runs, "push_failing"), "rmq5-push"
    assert not of(events, "error"), events
    assert [e["delivery_attempt"] for e in of(events, "consumed")] == [1, 2]
    assert until_dead_letters(env, group) == ["fails"]


def dead_letters(env: Rmq5Env, group: str) -> list[str]:
    """The bodies in ``%DLQ%<group>`` (one queue), read from the broker's store."""
    result = env.broker.message_store.get_message("t", f"%DLQ%{group}", 0, 0, 32)
    return [decode_message(b).body.decode() for b in result.message_buffers]


def until_dead_letters(env: Rmq5Env, group: str, timeout_s: float = 10.0) -> list[str]:
    """The DLQ's bodies once there are any (the forward follows the last receive)."""
    end = time.monotonic() + timeout_s
    while not (found := dead_letters(env, group)) and time.monotonic() < end:
        time.sleep(0.1)
    return found
