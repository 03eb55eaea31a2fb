"""Our clients sign with the credentials on their config: the asyncio and blocking producer,
push and lite pull consumers against a broker with ``aclEnable=true``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.client import LitePullConsumer, Message, MessageExt, SendStatus
from rocketq.client import Producer as BlockingProducer
from rocketq.client.aio import Producer, PushConsumer
from rocketq.client.status import ConsumeStatus
from rocketq.common.message_decoder import decode_messages
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import NoPermissionError
from rocketq.store.message_store import MessageStore
from rocketq.testing import until
from rocketq.testing.acl import (
    ADMIN,
    NORMAL,
    PUB_ONLY,
    SUB_ONLY,
    WAIT_S,
    WHITE,
    AclCluster,
)
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER
from rocketq.testing.wait import collect_sync

CONSUME_WAIT_S = 30.0


def credentials(account: tuple[str, str]) -> dict[str, str]:
    return {"access_key": account[0], "secret_key": account[1]}


async def create_topic(cluster: AclCluster, topic: str) -> None:
    cluster.broker.topic_config_manager.update_topic_config(
        TopicConfig(topic_name=topic, read_queue_nums=2, write_queue_nums=2)
    )
    await cluster.broker.register_broker_all()


async def test_async_producer_and_push_consumer_sign_with_their_own_accounts(
    acl_cluster: AclCluster,
) -> None:
    await create_topic(acl_cluster, "TopicA")
    ns = acl_cluster.namesrv.addr
    async with Producer("pg", namesrv_addr=ns, **FAST_CLIENT, **credentials(PUB_ONLY)) as p:
        results = [await p.send(Message("TopicA", b"m%d" % i)) for i in range(6)]
    assert [r.status for r in results] == [SendStatus.SEND_OK] * 6
    got: list[MessageExt] = []

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        got.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        "GroupA",
        namesrv_addr=ns,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
        **credentials(SUB_ONLY),
    )
    consumer.subscribe("TopicA", "*")
    consumer.register_message_listener(listener)
    async with consumer:
        assert await until(lambda: len(got) >= 6, timeout_s=CONSUME_WAIT_S)
        committed = acl_cluster.broker.consumer_offset_manager.query_offsets
        assert await until(lambda: sum(committed("GroupA", "TopicA").values()) == 6, WAIT_S)
    assert sorted(m.body for m in got) == [b"m%d" % i for i in range(6)]


async def test_a_producer_with_a_wrong_secret_or_no_permission_is_refused(
    acl_cluster: AclCluster,
) -> None:
    await create_topic(acl_cluster, "TopicA")
    ns = acl_cluster.namesrv.addr
    for account in ((NORMAL[0], "wrong-secret"), SUB_ONLY):
        async with Producer("pg", namesrv_addr=ns, **FAST_CLIENT, **credentials(account)) as p:
            with pytest.raises(NoPermissionError, match=f"accessKey={account[0]}"):
                await p.send(Message("TopicA", b"refused"))
    assert acl_cluster.broker.message_store.get_max_offset_in_queue("TopicA", 0) == 0


def blocking_scenario(namesrv_addr: str) -> tuple[list[SendStatus], list[MessageExt]]:
    with BlockingProducer(
        "pg", namesrv_addr=namesrv_addr, **FAST_CLIENT, **credentials(NORMAL)
    ) as p:
        statuses = [p.send(Message("TopicB", b"b%d" % i)).status for i in range(4)]
    consumer = LitePullConsumer(
        "GroupB",
        namesrv_addr=namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        **FAST_CONSUMER,
        **credentials(NORMAL),
    )
    consumer.subscribe("TopicB")
    with consumer:
        got = collect_sync(lambda: consumer.poll(0.5), 4, CONSUME_WAIT_S)
    return statuses, got


async def test_blocking_producer_and_lite_pull_consumer_sign_from_plain_threads(
    acl_cluster: AclCluster,
) -> None:
    await create_topic(acl_cluster, "TopicB")
    statuses, got = await asyncio.to_thread(blocking_scenario, acl_cluster.namesrv.addr)
    assert statuses == [SendStatus.SEND_OK] * 4
    assert sorted(m.body for m in got) == [b"b%d" % i for i in range(4)]
    validator = acl_cluster.broker.access_validator
    assert validator is not None
    assert validator.allowed_count > 0


def test_the_secret_never_shows_in_a_client_config_repr(tmp_path: Path) -> None:
    producer = BlockingProducer("pg", namesrv_addr="127.0.0.1:1", **credentials(NORMAL))
    assert NORMAL[1] not in repr(producer.impl.config)
    assert NORMAL[0] in repr(producer.impl.config)


async def test_our_producer_from_a_white_listed_address_needs_no_valid_signature(
    acl_cluster: AclCluster,
) -> None:
    await create_topic(acl_cluster, "TopicA")
    ns = acl_cluster.namesrv.addr
    # the account's whiteRemoteAddress (127.0.0.*) matches: signature and permissions skipped
    white = credentials((WHITE[0], "not-the-secret"))
    async with Producer("pg", namesrv_addr=ns, **FAST_CLIENT, **white) as p:
        assert (await p.send(Message("TopicA", b"white-account"))).status is SendStatus.SEND_OK
    # no credentials at all: refused until 127.0.0.1 is a global white address
    async with Producer("pg", namesrv_addr=ns, **FAST_CLIENT) as p:
        with pytest.raises(NoPermissionError, match="No accessKey"):
            await p.send(Message("TopicA", b"unsigned-refused"))
        async with AsyncAdminClient(ns, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
            await admin.update_global_white_addr_config(acl_cluster.broker_addr, ["127.0.0.1"])
        assert (await p.send(Message("TopicA", b"global-white"))).status is SendStatus.SEND_OK
    store = acl_cluster.broker.message_store
    assert store.wait_for_dispatch(WAIT_S)  # a send is answered before its queue entry exists
    bodies = sorted(m.body for q in range(2) for m in read_queue(store, "TopicA", q))
    assert bodies == [b"global-white", b"white-account"]


async def test_our_admin_client_creates_a_topic_only_with_an_admin_account(
    acl_cluster: AclCluster,
) -> None:
    ns, addr = acl_cluster.namesrv.addr, acl_cluster.broker_addr
    topics = acl_cluster.broker.topic_config_manager.topic_config_table
    for account in (NORMAL, PUB_ONLY, (ADMIN[0], "wrong-secret")):
        async with AsyncAdminClient(ns, access_key=account[0], secret_key=account[1]) as admin:
            with pytest.raises(NoPermissionError, match=f"accessKey={account[0]}"):
                await admin.create_and_update_topic_config(addr, TopicConfig(topic_name="AdminT"))
        assert "AdminT" not in topics
    async with AsyncAdminClient(ns, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        await admin.create_and_update_topic_config(addr, TopicConfig(topic_name="AdminT"))
    assert "AdminT" in topics


def read_queue(store: MessageStore, topic: str, queue_id: int) -> list[MessageExt]:
    result = store.get_message("reader", topic, queue_id, 0, 32)
    return [m for buf in result.message_buffers for m in decode_messages(bytes(buf))]
