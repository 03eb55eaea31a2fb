"""The official C++ client (PyPI ``rocketmq`` 0.4.4) with session credentials against a broker
with ``aclEnable=true``: right accounts produce and consume, a wrong secret or no credentials
are refused and nothing of theirs is stored."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.common.topic_config import TopicConfig
from rocketq.testing import until
from rocketq.testing.acl import ADMIN, NORMAL, PUB_ONLY, SUB_ONLY, WHITE, AclCluster
from tests.interop.cpp_runner import run_driver, start_driver

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        importlib.util.find_spec("rocketmq") is None, reason="rocketmq wheel not installed"
    ),
]

PRODUCE_TIMEOUT_S = 60.0
CONSUME_TIMEOUT_S = 60.0


def creds(account: tuple[str, str]) -> list[str]:
    return ["--access-key", account[0], "--secret-key", account[1]]


async def produce(
    cluster: AclCluster, home: Path, topic: str, count: int, *extra: str
) -> list[dict[str, Any]]:
    args = ["produce", "--namesrv", cluster.namesrv.addr, "--topic", topic, "--count", str(count)]
    return await run_driver(home, PRODUCE_TIMEOUT_S, *args, *extra)


async def create_topic(cluster: AclCluster, topic: str) -> None:
    cluster.broker.topic_config_manager.update_topic_config(
        TopicConfig(topic_name=topic, read_queue_nums=2, write_queue_nums=2)
    )
    await cluster.broker.register_broker_all()


async def test_cpp_producer_and_consumer_with_their_accounts_produce_and_consume(
    acl_cluster: AclCluster, tmp_path: Path
) -> None:
    await create_topic(acl_cluster, "TopicA")
    events = await produce(acl_cluster, tmp_path / "p", "TopicA", 8, *creds(PUB_ONLY))
    sent = [e for e in events if e["event"] == "sent"]
    assert len(sent) == 8, events
    assert all(e["status"] == 0 for e in sent)
    args = ["push", "--namesrv", acl_cluster.namesrv.addr, "--topic", "TopicA"]
    args += ["--group", "GroupA", "--expect", "8", "--timeout", str(CONSUME_TIMEOUT_S)]
    run = await start_driver(tmp_path / "c", *args, *creds(SUB_ONLY))
    try:
        await run.wait(CONSUME_TIMEOUT_S + 15)
    finally:
        await run.kill()
    seqs = sorted(int(m["properties"]["seq"]) for m in run.messages())
    assert seqs == list(range(8))
    offsets = acl_cluster.broker.consumer_offset_manager
    assert await until(lambda: sum(offsets.query_offsets("GroupA", "TopicA").values()) == 8, 10)


@pytest.mark.parametrize(
    "extra",
    [creds((NORMAL[0], "wrong-secret")), creds(SUB_ONLY), []],
    ids=["wrong_secret", "missing_pub", "no_credentials"],
)
async def test_cpp_producer_without_the_right_to_send_is_refused_and_stores_nothing(
    acl_cluster: AclCluster, tmp_path: Path, extra: list[str]
) -> None:
    await create_topic(acl_cluster, "TopicA")
    validator = acl_cluster.broker.access_validator
    assert validator is not None
    events = await produce(acl_cluster, tmp_path / "p", "TopicA", 2, *extra)
    assert [e for e in events if e["event"] == "sent"] == []
    assert len([e for e in events if e["event"] == "send_error"]) == 2, events
    assert validator.refused_count >= 2
    store = acl_cluster.broker.message_store
    assert all(store.get_max_offset_in_queue("TopicA", q) == 0 for q in range(2))


async def test_cpp_producer_from_a_white_listed_address_needs_no_valid_signature(
    acl_cluster: AclCluster, tmp_path: Path
) -> None:
    await create_topic(acl_cluster, "TopicA")
    store = acl_cluster.broker.message_store

    def stored() -> int:
        return sum(store.get_max_offset_in_queue("TopicA", q) for q in range(2))

    # the account's whiteRemoteAddress (127.0.0.*) matches: signature and permissions skipped
    white = creds((WHITE[0], "not-the-secret"))
    events = await produce(acl_cluster, tmp_path / "w", "TopicA", 2, *white)
    assert [e["status"] for e in events if e["event"] == "sent"] == [0, 0], events
    assert await until(lambda: stored() == 2, 10)  # queue entries are dispatched after the answer
    # without credentials: refused, then served once 127.0.0.1 is a global white address
    events = await produce(acl_cluster, tmp_path / "u", "TopicA", 1)
    assert [e for e in events if e["event"] == "sent"] == [], events
    async with AsyncAdminClient(
        acl_cluster.namesrv.addr, access_key=ADMIN[0], secret_key=ADMIN[1]
    ) as admin:
        await admin.update_global_white_addr_config(acl_cluster.broker_addr, ["127.0.0.1"])
    events = await produce(acl_cluster, tmp_path / "g", "TopicA", 2)
    assert [e["status"] for e in events if e["event"] == "sent"] == [0, 0], events
    assert await until(lambda: stored() == 4, 10)
