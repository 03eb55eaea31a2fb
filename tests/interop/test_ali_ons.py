"""ali-ons 3.12.0 (npm, pure JavaScript) unchanged against our name server and broker.

Each scenario runs the client under node in a subprocess (``js/ali_driver.js``) with a
deadline; the name server and broker run in this process on 127.0.0.1 port 0. ali-ons has no
TBW102 fallback, so the first scenario also proves that a send to a topic nobody created works
(the name server answers TBW102's route, namesrv/auto_create_route.py, on as in
``rocketq namesrv``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.common.filter import parse_sql92
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_message
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.server import NamesrvController
from rocketq.store.check import check_store
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.cli_process import CLI_PROGRAM, read_until
from rocketq.testing.store import MIB, small_store_properties
from rocketq.testing.wait import until
from tests.interop.ali_runner import ali_ons_missing, run_ali, start_ali
from tests.interop.cpp_runner import DriverRun

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(ali_ons_missing() is not None, reason=str(ali_ons_missing())),
]

STORE = small_store_properties(16 * MIB, messageDelayLevel="1s 2s 3s 4s 5s")
PRODUCE_TIMEOUT_S = 60.0
CONSUME_TIMEOUT_S = 60.0


@dataclass
class Env:
    namesrv: NamesrvController
    broker: BrokerController
    tmp: Path

    def home(self, name: str) -> Path:
        return self.tmp / "homes" / name

    async def produce(self, topic: str, count: int, *extra: str) -> list[dict[str, Any]]:
        args = ["produce", "--namesrv", self.namesrv.addr, "--topic", topic, "--count", str(count)]
        events = await run_ali(self.home("producer"), PRODUCE_TIMEOUT_S, *args, *extra)
        # an answered send is read back (from the store, by a consumer) only once dispatched
        assert await asyncio.to_thread(self.broker.message_store.wait_for_dispatch, 10.0)
        assert [e for e in events if e["event"] == "send_error"] == []
        sent = [e for e in events if e["event"] == "sent"]
        assert len(sent) == count, events
        assert all(e["status"] == "SEND_OK" and len(e["msg_id"]) == 32 for e in sent)
        return sent

    async def consume(
        self, topic: str, group: str, expect: int, *extra: str, name: str = "consumer"
    ) -> list[dict[str, Any]]:
        run = await self.start_consumer(topic, group, expect, *extra, name=name)
        return await finish(run)

    async def start_consumer(
        self, topic: str, group: str, expect: int, *extra: str, name: str = "consumer"
    ) -> DriverRun:
        args = ["consume", "--namesrv", self.namesrv.addr, "--topic", topic, "--group", group]
        args += ["--expect", str(expect), "--max-ms", str(int(CONSUME_TIMEOUT_S * 1000))]
        return await start_ali(self.home(name), *args, "--from-first", *extra)

    def committed(self, group: str, topic: str) -> int:
        return sum(self.broker.consumer_offset_manager.query_offsets(group, topic).values())


async def finish(run: DriverRun) -> list[dict[str, Any]]:
    try:
        events = await run.wait(CONSUME_TIMEOUT_S + 15)
    finally:
        await run.kill()
    assert [e for e in events if e["event"] == "done"], events[-5:]
    return run.messages()


@contextlib.asynccontextmanager
async def cluster(tmp: Path, **broker_options: Any) -> AsyncIterator[Env]:
    async with (
        run_namesrv(config=NamesrvConfig(auto_create_topic_route_enable=True)) as ns,
        run_broker(
            tmp / "store",
            namesrv_addr=ns.addr,
            store_properties=dict(STORE),
            **{"enable_property_filter": True, **broker_options},
        ) as broker,
    ):
        yield Env(ns, broker, tmp)
    report = check_store(str(tmp / "store"))
    assert report.ok, str(report)


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    async with cluster(tmp_path) as e:
        yield e


def seqs(msgs: list[dict[str, Any]]) -> Counter[int]:
    return Counter(int(m["seq"]) for m in msgs)


async def test_send_to_a_new_topic_then_clustering_consume_each_message_once(env: Env) -> None:
    props = json.dumps({"color": "red"})
    sent = await env.produce("AliNew", 20, "--tags", "TagA,TagB", "--props", props)
    assert env.broker.topic_config_manager.select_topic_config("AliNew") is not None
    msgs = await env.consume("AliNew", "AliGroup", 20)
    assert seqs(msgs) == Counter(range(20))
    by_seq = {e["seq"]: e for e in sent}
    for m in msgs:
        i = m["seq"]
        assert m["topic"] == "AliNew"
        assert m["tags"] == ("TagA" if i % 2 == 0 else "TagB")
        assert m["keys"] in (f"key-{i}", [f"key-{i}"])
        assert m["props"]["color"] == "red"
        assert m["body_sha256"] == by_seq[i]["body_sha256"]
        assert m["msg_id"] == by_seq[i]["msg_id"]
        assert (m["queue_id"], m["queue_offset"]) == (
            by_seq[i]["queue_id"],
            by_seq[i]["queue_offset"],
        )
    assert await until(lambda: env.committed("AliGroup", "AliNew") == 20, 10)


async def test_broadcasting_delivers_every_message_to_each_consumer(env: Env) -> None:
    await env.produce("AliCast", 10)
    runs = [
        await env.start_consumer(
            "AliCast", "AliCastGroup", 10, "--broadcast", "--instance-name", f"i{n}", name=f"c{n}"
        )
        for n in range(2)
    ]
    for run in runs:
        assert seqs(await finish(run)) == Counter(range(10))


async def test_tag_filter_delivers_only_the_subscribed_tags(env: Env) -> None:
    await env.produce("AliTags", 12, "--tags", "TagA,TagB,TagC")
    # idle past one long poll (2 s): the offset moves over trailing TagB messages when a pull
    # finds nothing more (ali-ons' correctTagsOffset)
    msgs = await env.consume(
        "AliTags", "AliTagGroup", 8, "--expr", "TagA || TagC", "--idle-ms", "4000"
    )
    assert Counter(m["tags"] for m in msgs) == Counter({"TagA": 4, "TagC": 4})
    assert await until(lambda: env.committed("AliTagGroup", "AliTags") == 12, 10)


async def test_sharding_key_keeps_each_keys_messages_in_one_queue_and_in_order(env: Env) -> None:
    sent = await env.produce("AliOrder", 30, "--sharding-keys", "order-1,order-2,order-3")
    queues: defaultdict[str, set[int]] = defaultdict(set)
    for e in sent:
        queues[e["sharding_key"]].add(e["queue_id"])
    assert all(len(q) == 1 for q in queues.values()), queues
    msgs = await env.consume("AliOrder", "AliOrderGroup", 30)
    assert seqs(msgs) == Counter(range(30))
    for key in queues:
        got = [m["seq"] for m in msgs if m["props"].get("__SHARDING_KEY") == key]
        assert got == sorted(got), (key, got)
        assert len(got) == 10


async def test_delay_level_holds_the_message_until_its_time(env: Env) -> None:
    started = time.time() * 1000
    await env.produce("AliDelay", 3, "--delay-level", "2")
    msgs = await env.consume("AliDelay", "AliDelayGroup", 3)
    assert seqs(msgs) == Counter(range(3))
    for m in msgs:
        assert "DELAY" not in m["props"]  # cleared when delivered, as ScheduleMessageService does
        assert m["props"]["REAL_TOPIC"] == "AliDelay"
        assert m["store_ts"] - m["born_ts"] >= 1900  # level 2 is 2 s here
        assert m["store_ts"] >= started + 1900


async def test_large_and_compressed_bodies_arrive_intact(env: Env) -> None:
    big = await env.produce("AliBig", 3, "--body-size", str(512 * 1024))
    packed = await env.produce(
        "AliBig", 3, "--body-size", str(64 * 1024), "--compressible", "--keys-prefix", "z-"
    )
    msgs = await env.consume("AliBig", "AliBigGroup", 6)
    assert sorted(m["body_sha256"] for m in msgs) == sorted(e["body_sha256"] for e in big + packed)
    assert {m["body_len"] for m in msgs} == {512 * 1024, 64 * 1024}
    # stored as ali-ons sent them: zlib bodies with COMPRESSED_FLAG, inflated only by the client
    store = env.broker.message_store
    records = [
        decode_message(store.get_message("t", "AliBig", q, offset, 1).message_buffers[0])
        for q in range(4)
        for offset in range(store.get_max_offset_in_queue("AliBig", q))
    ]
    assert len(records) == 6
    assert all(r.sys_flag & MessageSysFlag.COMPRESSED_FLAG for r in records)
    small = [r for r in records if (r.keys or [""])[0].startswith("z-")]
    assert len(small) == 3
    assert all(len(r.body) < 64 * 1024 // 10 for r in small)  # really compressed on the wire


async def test_consumer_offsets_survive_a_broker_restart(tmp_path: Path) -> None:
    async with cluster(tmp_path) as first:
        await first.produce("AliRestart", 10)
        assert seqs(await first.consume("AliRestart", "AliRestartGroup", 10)) == Counter(range(10))
        assert await until(lambda: first.committed("AliRestartGroup", "AliRestart") == 10, 10)
    async with cluster(tmp_path) as second:
        assert second.committed("AliRestartGroup", "AliRestart") == 10
        await second.produce("AliRestart", 5, "--keys-prefix", "after-")
        msgs = await second.consume("AliRestart", "AliRestartGroup", 5, name="again")
        assert sorted(m["keys"] if isinstance(m["keys"], str) else m["keys"][0] for m in msgs) == [
            f"after-{i}" for i in range(5)
        ]


async def test_sql92_subscription_delivers_exactly_the_matching_messages(env: Env) -> None:
    for region, count in (("eu", 8), ("us", 8)):
        await env.produce("AliSql", count, "--props", json.dumps({"region": region}))
    expression = "region = 'eu' AND seq BETWEEN 2 AND 5"
    msgs = await env.consume("AliSql", "AliSqlGroup", 4, "--sql", expression, "--idle-ms", "4000")
    selector = parse_sql92(expression)
    assert all(selector.matches(m["props"]) for m in msgs)
    assert sorted((m["props"]["region"], m["seq"]) for m in msgs) == [
        ("eu", 2),
        ("eu", 3),
        ("eu", 4),
        ("eu", 5),
    ]
    assert await until(lambda: env.committed("AliSqlGroup", "AliSql") == 16, 10)


async def test_a_body_over_max_message_size_is_refused_with_the_reason(tmp_path: Path) -> None:
    async with cluster(tmp_path, max_message_size=256 * 1024) as small:
        await small.produce("AliLimit", 1, "--body-size", str(200 * 1024))
        args = ["produce", "--namesrv", small.namesrv.addr, "--topic", "AliLimit"]
        events = await run_ali(
            small.home("big"), PRODUCE_TIMEOUT_S, *args, "--body-size", str(300 * 1024)
        )
        (refused,) = [e for e in events if e["event"] == "send_error"]
        assert "the message body size over max value, MAX: 262144" in refused["error"]
        stored = [
            small.broker.message_store.get_max_offset_in_queue("AliLimit", q) for q in range(4)
        ]
        assert sum(stored) == 1  # only the message under the limit


async def test_a_bad_sql92_subscription_is_refused_with_the_parsers_message(env: Env) -> None:
    await env.produce("AliBadSql", 2, "--props", json.dumps({"a": "1"}))
    run = await env.start_consumer(
        "AliBadSql", "AliBadSqlGroup", 1, "--sql", "a >", "--max-ms", "4000"
    )
    assert await finish(run) == []
    errors = [e["error"] for e in run.events if e["event"] == "error"]
    assert errors
    assert "Encountered <EOF> at line 1, column 4" in errors[0]
    offsets = env.broker.consumer_offset_manager.query_offsets("AliBadSqlGroup", "AliBadSql")
    assert all(v <= 0 for v in offsets.values()), offsets  # ali-ons commits -1: never consumed


async def test_sql92_is_refused_naming_the_setting_when_property_filters_are_off(
    tmp_path: Path,
) -> None:
    async with cluster(tmp_path, enable_property_filter=False) as off:
        await off.produce("AliOff", 2)
        run = await off.start_consumer(
            "AliOff", "AliOffGroup", 1, "--sql", "a > 1", "--max-ms", "4000"
        )
        assert await finish(run) == []
        errors = [e["error"] for e in run.events if e["event"] == "error"]
        assert errors
        assert "by SQL92 (enablePropertyFilter=false in broker.conf)" in errors[0]


async def test_two_clustering_consumers_of_one_group_share_the_queues(env: Env) -> None:
    await env.produce("AliShare", 4)  # creates the topic's 4 queues
    runs = [
        await env.start_consumer("AliShare", "AliShareGroup", 10_000, name=f"share{n}")
        for n in range(2)
    ]
    try:

        def queues_split_between_two_consumers() -> bool:
            holders: defaultdict[int, set[object]] = defaultdict(set)
            for pulls in env.broker.pull_request_hold_service._table.values():
                for p in pulls:
                    if p.topic == "AliShare":
                        holders[p.queue_id].add(p.channel)
            channels = set().union(*holders.values()) if holders else set()
            return (
                len(holders) == 4
                and len(channels) == 2
                and all(len(c) == 1 for c in holders.values())
            )

        # both consumers have rebalanced: each queue's long poll comes from one of them
        assert await until(queues_split_between_two_consumers, CONSUME_TIMEOUT_S)
        await env.produce("AliShare", 40, "--keys-prefix", "shared-")

        def shared(run: DriverRun) -> set[str]:
            return {str(m["keys"]) for m in run.messages() if "shared-" in str(m["keys"])}

        assert await until(lambda: len(shared(runs[0]) | shared(runs[1])) == 40, 60)
        assert all(shared(run) for run in runs)  # each consumer got a share
        assert not shared(runs[0]) & shared(runs[1])  # and no message went to both
    finally:
        for run in runs:
            await run.kill()


async def test_ali_ons_against_the_rocketq_server_command_sends_to_a_new_topic(
    tmp_path: Path,
) -> None:
    """The issue's setup: ``rocketq server`` (name server + broker, autoCreateTopicEnable)."""
    args = ["server", "--store", str(tmp_path / "store"), "--host", "127.0.0.1"]
    args += ["--namesrv-port", "0", "--broker-port", "0", "--grpc-port", "0"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI_PROGRAM,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        found = await read_until(proc.stdout, r"name server listening on .*:(\d+)", 30)
        namesrv = f"127.0.0.1:{found.group(1)}"
        produce = ["produce", "--namesrv", namesrv, "--topic", "CliNew", "--count", "3"]
        events = await run_ali(tmp_path / "homes" / "p", PRODUCE_TIMEOUT_S, *produce)
        assert [e["status"] for e in events if e["event"] == "sent"] == ["SEND_OK"] * 3, events
        consume = ["consume", "--namesrv", namesrv, "--topic", "CliNew", "--group", "CliG"]
        run = await start_ali(tmp_path / "homes" / "c", *consume, "--expect", "3", "--from-first")
        assert seqs(await finish(run)) == Counter(range(3))
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
