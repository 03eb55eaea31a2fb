"""The official C++ client (PyPI ``rocketmq`` 0.4.4) against our name server and broker.

Every scenario runs the client in a subprocess (``cpp_driver.py``) with a deadline; the name
server and broker run in this process on 127.0.0.1 port 0.
"""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rocketq.response_code import ResponseCode
from rocketq.store.check import check_store
from rocketq.testing import run_broker, run_namesrv, until
from tests.interop.cpp_env import (
    CONSUME_TIMEOUT_S,
    PRODUCE_TIMEOUT_S,
    SMALL_STORE,
    Env,
    assert_store_checks,
    cpp_env,
)
from tests.interop.cpp_runner import DriverRun, run_driver, start_driver

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        importlib.util.find_spec("rocketmq") is None, reason="rocketmq wheel not installed"
    ),
]


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    async with cpp_env(tmp_path) as running:
        yield running


def sent(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "sent"]


async def test_sync_send_then_push_consume_each_message_once_intact(env: Env) -> None:
    events = await env.produce("TopicA", 20, "--tags", "TagA,TagB", "--color", "red")
    ok = sent(events)
    assert len(ok) == 20, events
    assert all(e["status"] == 0 and len(e["msg_id"]) == 32 for e in ok)
    run = await env.consumer(
        "TopicA", "GroupA", "--expect", "20", "--timeout", str(CONSUME_TIMEOUT_S)
    )
    try:
        await run.wait(CONSUME_TIMEOUT_S + 15)
    finally:
        await run.kill()
    msgs = run.messages()
    seqs = Counter(int(m["properties"]["seq"]) for m in msgs)
    assert sorted(seqs) == list(range(20))
    assert all(n == 1 for n in seqs.values()), seqs
    for m in msgs:
        i = int(m["properties"]["seq"])
        assert m["body"] == f"body-{i}"
        assert m["tags"] == ("TagA" if i % 2 == 0 else "TagB")
        assert m["keys"] == f"key-{i}"
        assert m["properties"]["color"] == "red"
        assert m["properties"]["CLUSTER"] == "DefaultCluster"
    offsets = env.broker.consumer_offset_manager
    assert await until(lambda: sum(offsets.query_offsets("GroupA", "TopicA").values()) == 20, 10)


async def test_tag_filter_and_oneway_send(env: Env) -> None:
    producer = await start_driver(
        env.home("producer"), "produce", "--namesrv", env.namesrv.addr, "--topic", "TopicF",
        "--count", "12", "--tags", "TagA,TagB,TagC", "--oneway", "--hold-until-stdin-closes",
    )  # fmt: skip
    store = env.broker.message_store
    try:  # a oneway frame has no reply: the producer lives until the broker stored all 12
        stored = await until(
            lambda: sum(store.get_max_offset_in_queue("TopicF", q) for q in range(8)) >= 12, 30
        )
    finally:
        assert producer.proc.stdin is not None
        producer.proc.stdin.close()
        events = await producer.wait(PRODUCE_TIMEOUT_S)
    assert stored
    assert len(sent(events)) == 12
    run = await env.consumer(
        "TopicF", "GroupF", "--expr", "TagA || TagC", "--expect", "8", "--linger", "2"
    )
    try:
        await run.wait(CONSUME_TIMEOUT_S)
    finally:
        await run.kill()
    tags = Counter(m["tags"] for m in run.messages())
    assert tags == Counter({"TagA": 4, "TagC": 4})


async def test_two_consumers_in_one_group_split_the_queues(env: Env) -> None:
    env.create_topic("TopicS", 4)
    await env.broker.register_broker_all()
    a = await env.consumer("TopicS", "GroupS", "--instance", "a", "--timeout", "90", name="a")
    b = await env.consumer("TopicS", "GroupS", "--instance", "b", "--timeout", "90", name="b")
    try:
        assert await until(lambda: _members(env, "GroupS") == 2, 30)

        # The rebalance the last join triggered is done once, in the broker's long-polling
        # table, each member holds pulls on two queues and no queue is held by both. The
        # pulls the first member held on the queues it gave up lapse with their suspend
        # timeout (15 s in the C++ client), hence the long-lived consumers.
        def rebalanced() -> bool:
            return _split(_held_queues(env, "GroupS", "TopicS"))

        assert await until(rebalanced, 40), _held_queues(env, "GroupS", "TopicS")
        events = await env.produce("TopicS", 40)
        assert len(sent(events)) == 40
        assert await until(lambda: len(_seqs(a) | _seqs(b)) >= 40, CONSUME_TIMEOUT_S)
    finally:
        await a.kill()
        await b.kill()
    # At least once: a message may reach both consumers while a rebalance hands its queue
    # over (RocketMQ allows that window). Every message arrives, and apart from such
    # duplicates each queue is read by one consumer only.
    seqs_a, seqs_b = _seqs(a), _seqs(b)
    assert seqs_a | seqs_b == set(range(40))
    both = seqs_a & seqs_b
    queues_a = {m["queue_id"] for m in a.messages() if int(m["properties"]["seq"]) not in both}
    queues_b = {m["queue_id"] for m in b.messages() if int(m["properties"]["seq"]) not in both}
    assert queues_a
    assert queues_b
    assert not queues_a & queues_b


def _seqs(run: DriverRun) -> set[int]:
    return {int(m["properties"]["seq"]) for m in run.messages()}


def _members(env: Env, group: str) -> int:
    info = env.broker.consumer_manager.get_consumer_group_info(group)
    return 0 if info is None else len(info.all_client_ids())


def _held_queues(env: Env, group: str, topic: str) -> dict[str, set[int]]:
    """For each member of ``group``: the queues of ``topic`` it has a pull held on."""
    info = env.broker.consumer_manager.get_consumer_group_info(group)
    members = {} if info is None else info.channel_info_table
    held: dict[str, set[int]] = {m.client_id: set() for m in members.values()}
    for pull in env.broker.pull_request_hold_service.held_pulls():
        member = members.get(pull.channel)
        if member is not None and pull.topic == topic:
            held[member.client_id].add(pull.queue_id)
    return held


def _split(held: dict[str, set[int]]) -> bool:
    """Two members, two queues each, four queues in all."""
    shares = list(held.values())
    return len(shares) == 2 and [len(q) for q in shares] == [2, 2] and len(set.union(*shares)) == 4


async def test_broadcasting_delivers_every_message_to_every_consumer(env: Env) -> None:
    env.create_topic("TopicB", 2)
    await env.broker.register_broker_all()
    runs = [
        await env.consumer(
            "TopicB", "GroupB", "--broadcast", "--instance", n, "--timeout", "25", name=n
        )
        for n in ("x", "y")
    ]
    try:
        assert await until(lambda: env.broker.pull_request_hold_service.held_count >= 4, 30)
        assert len(sent(await env.produce("TopicB", 10))) == 10
        assert await until(lambda: all(len(r.messages()) >= 10 for r in runs), CONSUME_TIMEOUT_S)
    finally:
        for r in runs:
            await r.kill()
    for r in runs:
        assert sorted(int(m["properties"]["seq"]) for m in r.messages()) == list(range(10))


async def test_orderly_send_and_orderly_consume_keep_queue_order(env: Env) -> None:
    events = await env.produce("TopicO", 20, "--orderly", "--order-keys", "2")
    ok = sent(events)
    assert len(ok) == 20
    run = await env.consumer("TopicO", "GroupO", "--orderly", "--expect", "20")
    try:
        await run.wait(CONSUME_TIMEOUT_S)
    finally:
        await run.kill()
    msgs = run.messages()
    assert sorted(int(m["properties"]["seq"]) for m in msgs) == list(range(20))
    by_queue: dict[int, list[int]] = {}
    for m in msgs:
        by_queue.setdefault(m["queue_id"], []).append(int(m["properties"]["seq"]))
    assert len(by_queue) == 2
    for seqs in by_queue.values():
        assert seqs == sorted(seqs)
        assert len({s % 2 for s in seqs}) == 1


async def test_pull_consumer_reads_from_offset_zero(env: Env) -> None:
    assert len(sent(await env.produce("TopicP", 10))) == 10
    args = ["pull", "--namesrv", env.namesrv.addr, "--topic", "TopicP", "--group", "GroupP"]
    events = await run_driver(env.home("puller"), CONSUME_TIMEOUT_S, *args)
    msgs = [e for e in events if e["event"] == "msg"]
    assert sorted(int(m["properties"]["seq"]) for m in msgs) == list(range(10))


async def test_large_and_compressed_bodies_round_trip(env: Env) -> None:
    big = await env.produce(
        "TopicL", 1, "--body-size", str(1024 * 1024), "--max-size", str(4 * 1024 * 1024), name="p1"
    )
    small = await env.produce("TopicL", 2, "--body-size", "20000", "--compressible", name="p2")
    expected = {e["body_sha256"] for e in sent(big) + sent(small)}
    assert len(expected) == 3
    run = await env.consumer("TopicL", "GroupL", "--expect", "3")
    try:
        await run.wait(CONSUME_TIMEOUT_S)
    finally:
        await run.kill()
    got = {(m["body_len"], m["body_sha256"]) for m in run.messages()}
    assert (1024 * 1024, sent(big)[0]["body_sha256"]) in got
    assert {(20000, e["body_sha256"]) for e in sent(small)} <= got


async def test_oversized_body_is_rejected_with_the_brokers_message_illegal(
    tmp_path: Path,
) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store",
            namesrv_addr=ns.addr,
            store_properties=dict(SMALL_STORE),
            max_message_size=64 * 1024,
        ) as broker,
    ):
        env = Env(ns, broker, tmp_path)
        env.create_topic("TopicX", 4)  # routed: the send reaches the broker's size check
        await broker.register_broker_all()
        events = await env.produce(
            "TopicX", 1, "--body-size", str(512 * 1024), "--max-size", str(4 * 1024 * 1024)
        )
    assert not sent(events)
    assert [e["event"] for e in events if e["event"] == "send_error"] == ["send_error"]
    # the C++ client retries and then throws "No route info" whatever the broker answered
    # (DefaultMQProducer::sendDefaultImpl); its log keeps each answer it got (processSendResponse)
    answers = broker_answers(env.home("producer"))
    assert answers, "the C++ client never got an answer from the broker"
    assert {code for code, _ in answers} == {ResponseCode.MESSAGE_ILLEGAL}
    assert all(remark.startswith("the message body size over max value") for _, remark in answers)
    assert all(broker.message_store.get_max_offset_in_queue("TopicX", q) == 0 for q in range(4))
    assert check_store(str(tmp_path / "store")).ok


SEND_ANSWER = re.compile(r"processSendResponse error remark:(.*), error code:(-?\d+)\[")


def broker_answers(home: Path) -> list[tuple[int, str]]:
    """The failed SEND_MESSAGE answers a C++ client logged: (response code, remark)."""
    lines = "".join(p.read_text(errors="replace") for p in sorted(home.glob("logs/**/*.log*")))
    return [(int(code), remark) for remark, code in SEND_ANSWER.findall(lines)]


async def test_restarted_consumer_resumes_from_its_committed_offset(env: Env) -> None:
    assert len(sent(await env.produce("TopicR", 10, name="p1"))) == 10
    first = await env.consumer("TopicR", "GroupR", "--expect", "10", "--linger", "1", name="c1")
    try:
        await first.wait(CONSUME_TIMEOUT_S)
    finally:
        await first.kill()
    assert len(first.messages()) == 10
    offsets = env.broker.consumer_offset_manager
    assert await until(lambda: sum(offsets.query_offsets("GroupR", "TopicR").values()) == 10, 10)
    assert len(sent(await env.produce("TopicR", 5, "--key-prefix", "second-", name="p2"))) == 5
    second = await env.consumer("TopicR", "GroupR", "--expect", "5", "--linger", "2", name="c2")
    try:
        await second.wait(CONSUME_TIMEOUT_S)
    finally:
        await second.kill()
    assert sorted(m["keys"] for m in second.messages()) == sorted(f"second-{i}" for i in range(5))


FAST_DELAYS = " ".join(["1s"] * 18)


async def test_failed_message_is_sent_back_and_redelivered_from_the_retry_topic(
    tmp_path: Path,
) -> None:
    props = dict(SMALL_STORE, messageDelayLevel=FAST_DELAYS)
    async with (
        run_namesrv() as ns,
        run_broker(tmp_path / "store", namesrv_addr=ns.addr, store_properties=props) as broker,
    ):
        env = Env(ns, broker, tmp_path)
        assert len(sent(await env.produce("TopicRetry", 3))) == 3
        run = await env.consumer("TopicRetry", "GroupRetry", "--fail-first", "--expect", "3")
        try:
            await run.wait(CONSUME_TIMEOUT_S)
        finally:
            await run.kill()
    failed = [e for e in run.events if e["event"] == "reconsume_later"]
    redelivered = run.messages()
    assert sorted(int(e["properties"]["seq"]) for e in failed) == [0, 1, 2]
    assert sorted(int(m["properties"]["seq"]) for m in redelivered) == [0, 1, 2]
    assert all(m["reconsume_times"] == 1 for m in redelivered)
    assert all(m["topic"] == "TopicRetry" for m in redelivered)
    assert broker.topic_config_manager.select_topic_config("%RETRY%GroupRetry") is not None
    assert_store_checks(tmp_path / "store")
