"""SQL92 property filters over real sockets: CHECK_CLIENT_CONFIG, heartbeat and pull.

A property-rich topic is written once; every pull's answer is compared with the messages the
selector matches, worked out by hand, following nextBeginOffset so that nothing that matches
is skipped and offsets always advance.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.common import message_decoder as codec
from rocketq.common.pull_sys_flag import FLAG_SUBSCRIPTION, FLAG_SUSPEND
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.bodies import CheckClientRequestBody, ConsumerData, HeartbeatData
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import PullMessageRequestHeader
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.cluster import Cluster
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until
from rocketq.testing.wire import send_request

pytestmark = pytest.mark.e2e
WAIT = 10.0
TOPIC = "Props"
COLORS = ("red", "green", "blue")


def properties_of(i: int) -> dict[str, str]:
    """Message i's user properties: some absent, numbers, decimals, booleans, strings."""
    props = {"color": COLORS[i % 3], "flag": "true" if i % 4 == 0 else "false"}
    if i % 5 != 0:
        props["a"] = str(i)
    if i % 2 == 0:
        props["price"] = f"{i}.5"
    return props


MESSAGES = 30


@contextlib.asynccontextmanager
async def start_cluster(tmp_path: Path, enable: bool) -> AsyncIterator[Cluster]:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store",
            namesrv_addr=ns.addr,
            store_properties=small_store_properties(),
            enable_property_filter=enable,
        ) as broker,
        RemotingClient() as client,
    ):
        yield Cluster(ns, broker, client, tmp_path / "store")


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with start_cluster(tmp_path, enable=True) as c:
        for i in range(MESSAGES):
            tags = "TagA" if i % 2 else "TagB"
            request = send_request(TOPIC, f"m{i}".encode(), tags=tags, extra=properties_of(i))
            response = await c.client.invoke(c.broker_addr, request, WAIT)
            assert response.code == ResponseCode.SUCCESS, response.remark
        assert await asyncio.to_thread(c.broker.message_store.wait_for_dispatch, 5.0)
        yield c


def sql_pull(
    expression: str,
    offset: int,
    *,
    group: str = "G",
    max_nums: int = 32,
    sys_flag: int = FLAG_SUBSCRIPTION,
) -> RemotingCommand:
    header = PullMessageRequestHeader(
        consumer_group=group,
        topic=TOPIC,
        queue_id=0,
        queue_offset=offset,
        max_msg_nums=max_nums,
        sys_flag=sys_flag,
        commit_offset=-1,
        suspend_timeout_millis=1000,
        sub_version=0,
        subscription=expression,
        expression_type="SQL92",
    )
    return RemotingCommand.create_request(RequestCode.PULL_MESSAGE, header.to_ext_fields())


async def pull_all(c: Cluster, expression: str, max_nums: int, **kw: object) -> list[int]:
    """Follow nextBeginOffset to the end of the queue; the indexes of the messages pulled."""
    offset, found = 0, []
    for _ in range(MESSAGES + 2):
        response = await c.client.invoke(
            c.broker_addr,
            sql_pull(expression, offset, max_nums=max_nums, **kw),
            WAIT,  # type: ignore[arg-type]
        )
        assert response.code in (
            ResponseCode.SUCCESS,
            ResponseCode.PULL_RETRY_IMMEDIATELY,
            ResponseCode.PULL_NOT_FOUND,
        ), response.remark
        next_offset = int(response.ext_fields["nextBeginOffset"])
        if response.code == ResponseCode.SUCCESS:
            msgs = codec.decode_messages(response.body)
            found += [int(m.body.decode()[1:]) for m in msgs]
            assert next_offset > msgs[-1].queue_offset
        if response.code == ResponseCode.PULL_NOT_FOUND:
            assert next_offset == MESSAGES
            return found
        assert next_offset > offset  # always moves forward
        offset = next_offset
    raise AssertionError("the pulls did not reach the end of the queue")


# Worked out by hand from properties_of (a property a selector names but the message lacks
# makes the comparison false, as RocketMQ's evaluator does):
#   a = i unless i % 5 == 0; color = red, green, blue for i % 3 = 0, 1, 2;
#   flag = true when i % 4 == 0; price = i + 0.5 for even i; TAGS = TagA for odd i.
# fmt: off
SELECTED = {
    "a > 10": [11, 12, 13, 14, 16, 17, 18, 19, 21, 22, 23, 24, 26, 27, 28, 29],
    "a >= 10 AND a < 20": [11, 12, 13, 14, 16, 17, 18, 19],
    "a <= 3": [1, 2, 3],
    "a = 7": [7],
    "a <> 7": [1, 2, 3, 4, 6, 8, 9, 11, 12, 13, 14, 16, 17, 18, 19,
               21, 22, 23, 24, 26, 27, 28, 29],
    "a BETWEEN 5 AND 15": [6, 7, 8, 9, 11, 12, 13, 14],
    "a NOT BETWEEN 5 AND 15": [1, 2, 3, 4, 16, 17, 18, 19, 21, 22, 23, 24, 26, 27, 28, 29],
    "color IN ('red', 'blue')": [0, 2, 3, 5, 6, 8, 9, 11, 12, 14,
                                 15, 17, 18, 20, 21, 23, 24, 26, 27, 29],
    "color NOT IN ('red')": [1, 2, 4, 5, 7, 8, 10, 11, 13, 14,
                             16, 17, 19, 20, 22, 23, 25, 26, 28, 29],
    "a IS NULL": [0, 5, 10, 15, 20, 25],
    "a IS NOT NULL AND price IS NOT NULL": [2, 4, 6, 8, 12, 14, 16, 18, 22, 24, 26, 28],
    "flag = TRUE OR color = 'green'": [0, 1, 4, 7, 8, 10, 12, 13, 16, 19, 20, 22, 24, 25, 28],
    "NOT (color = 'red')": [1, 2, 4, 5, 7, 8, 10, 11, 13, 14,
                            16, 17, 19, 20, 22, 23, 25, 26, 28, 29],
    "price > 20.0": [20, 22, 24, 26, 28],
    "TAGS = 'TagA' AND a > 20": [21, 23, 27, 29],
    "(a < 5 OR a > 25) AND color <> 'blue'": [1, 3, 4, 27, 28],
    "TRUE": list(range(MESSAGES)),
}
# fmt: on


@pytest.mark.parametrize(("expression", "expected"), SELECTED.items(), ids=list(SELECTED))
async def test_pull_returns_exactly_the_messages_the_selector_matches(
    cluster: Cluster, expression: str, expected: list[int]
) -> None:
    assert await pull_all(cluster, expression, max_nums=4) == expected


async def test_a_selector_that_matches_nothing_advances_the_offset_and_then_finds_a_match(
    cluster: Cluster,
) -> None:
    assert await pull_all(cluster, "color = 'purple'", max_nums=4) == []
    response = await cluster.client.invoke(
        cluster.broker_addr, sql_pull("color = 'purple'", 0), WAIT
    )
    assert response.code == ResponseCode.PULL_RETRY_IMMEDIATELY
    assert response.ext_fields["nextBeginOffset"] == str(MESSAGES)
    purple = send_request(TOPIC, b"m99", extra={"color": "purple"})
    assert (await cluster.client.invoke(cluster.broker_addr, purple, WAIT)).code == 0
    assert await asyncio.to_thread(cluster.broker.message_store.wait_for_dispatch, 5.0)
    found = await cluster.client.invoke(
        cluster.broker_addr, sql_pull("color = 'purple'", MESSAGES), WAIT
    )
    assert found.code == ResponseCode.SUCCESS
    assert [m.body for m in codec.decode_messages(found.body)] == [b"m99"]


async def test_a_bad_expression_is_refused_with_the_parsers_message(cluster: Cluster) -> None:
    response = await cluster.client.invoke(cluster.broker_addr, sql_pull("a > ", 0), WAIT)
    assert response.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
    assert response.remark is not None
    assert "Encountered <EOF> at line 1, column 5" in response.remark
    check = await cluster.client.invoke(cluster.broker_addr, check_client("a BETWEEN 3 AND"), WAIT)
    assert check.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
    assert check.remark is not None
    assert check.remark.startswith("Invalid MessageSelector. Encountered <EOF>")
    good = await cluster.client.invoke(cluster.broker_addr, check_client("a > 3"), WAIT)
    assert good.code == ResponseCode.SUCCESS


def check_client(expression: str, expression_type: str = "SQL92") -> RemotingCommand:
    body = CheckClientRequestBody(
        client_id="127.0.0.1@test",
        group="G",
        subscription_data=SubscriptionData(
            topic=TOPIC, sub_string=expression, expression_type=expression_type
        ),
    )
    return RemotingCommand.create_request(RequestCode.CHECK_CLIENT_CONFIG, body=body.encode())


async def test_a_heartbeat_subscription_filters_pulls_without_the_subscription_flag(
    cluster: Cluster,
) -> None:
    expression = "color = 'green' AND a > 3"
    data = HeartbeatData(
        client_id="127.0.0.1@hb",
        consumer_data_set=[
            ConsumerData(
                group_name="GH",
                subscription_data_set=[
                    SubscriptionData(topic=TOPIC, sub_string=expression, expression_type="SQL92")
                ],
            )
        ],
    )
    beat = RemotingCommand.create_request(RequestCode.HEART_BEAT, body=data.encode())
    assert (await cluster.client.invoke(cluster.broker_addr, beat, WAIT)).code == 0
    pulled = await pull_all(cluster, "ignored: not sent", max_nums=32, group="GH", sys_flag=0)
    assert pulled == [4, 7, 13, 16, 19, 22, 28]  # green (i % 3 == 1) with a > 3


async def test_query_consume_queue_shows_an_online_sql92_groups_filter_data_as_rocketmq_does(
    cluster: Cluster,
) -> None:
    """QUERY_CONSUME_QUEUE's filterData: JSON.toJSONString(ConsumerFilterData, true) for an
    SQL92 subscription (born when first seen, its client version the subVersion); "null" for a
    tag subscription; "<group>@<topic> is not online!" without one."""
    subs = [
        ("GF", SubscriptionData(topic=TOPIC, sub_string="a > 3", expression_type="SQL92")),
        ("GT", SubscriptionData(topic=TOPIC, sub_string="*")),
    ]
    for group, sub in subs:
        sub.sub_version = 1_700_000_000_123
        data = HeartbeatData(
            client_id=f"127.0.0.1@{group}",
            consumer_data_set=[ConsumerData(group_name=group, subscription_data_set=[sub])],
        )
        beat = RemotingCommand.create_request(RequestCode.HEART_BEAT, body=data.encode())
        assert (await cluster.client.invoke(cluster.broker_addr, beat, WAIT)).code == 0

    async def filter_data(group: str) -> str:
        fields = {"topic": TOPIC, "queueId": "0", "index": "0", "count": "1"}
        fields["consumerGroup"] = group
        request = RemotingCommand.create_request(RequestCode.QUERY_CONSUME_QUEUE, fields)
        answer = await cluster.client.invoke(cluster.broker_addr, request, WAIT)
        assert answer.code == ResponseCode.SUCCESS, answer.remark
        return str(json.loads(answer.body)["filterData"])

    sql = await filter_data("GF")
    assert sql.startswith('{\n\t"bornTime":'), sql  # fastjson's pretty form: tabs, sorted keys
    obj = json.loads(sql)
    assert obj.pop("bornTime") > 1_600_000_000_000
    assert obj == {
        "clientVersion": 1_700_000_000_123,
        "consumerGroup": "GF",
        "dead": False,
        "deadTime": 0,
        "expression": "a > 3",
        "expressionType": "SQL92",
        "topic": TOPIC,
    }
    assert await filter_data("GT") == "null"
    assert await filter_data("Nobody") == f"Nobody@{TOPIC} is not online!"


async def test_unknown_expression_type_is_refused(cluster: Cluster) -> None:
    check = await cluster.client.invoke(cluster.broker_addr, check_client("x", "JS"), WAIT)
    assert check.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
    assert check.remark is not None
    assert "Unsupported expression type: JS" in check.remark


async def test_property_filter_off_is_refused_naming_the_setting(tmp_path: Path) -> None:
    async with start_cluster(tmp_path, enable=False) as c:
        sent = await c.client.invoke(c.broker_addr, send_request(TOPIC, b"x"), WAIT)
        assert sent.code == ResponseCode.SUCCESS
        check = await c.client.invoke(c.broker_addr, check_client("a > 1"), WAIT)
        assert check.code == ResponseCode.SYSTEM_ERROR
        assert check.remark is not None
        assert check.remark.startswith(
            "The broker does not support consumer to filter message by SQL92"
        )
        assert "enablePropertyFilter" in check.remark
        pull = await c.client.invoke(c.broker_addr, sql_pull("a > 1", 0), WAIT)
        assert pull.code == ResponseCode.SYSTEM_ERROR
        assert pull.remark == check.remark
        tag = await c.client.invoke(c.broker_addr, check_client("*", "TAG"), WAIT)
        assert tag.code == ResponseCode.SUCCESS


async def test_a_held_sql92_pull_is_answered_by_the_first_matching_arrival(
    cluster: Cluster,
) -> None:
    held = sql_pull("color = 'purple'", MESSAGES, sys_flag=FLAG_SUBSCRIPTION | FLAG_SUSPEND)
    held.ext_fields["suspendTimeoutMillis"] = "15000"
    answer = asyncio.create_task(cluster.client.invoke(cluster.broker_addr, held, 20))
    hold = cluster.broker.pull_request_hold_service
    assert await until(lambda: hold.held_count == 1, 5)
    for body, color in ((b"grey", "grey"), (b"purple", "purple")):
        request = send_request(TOPIC, body, extra={"color": color})
        assert (await cluster.client.invoke(cluster.broker_addr, request, WAIT)).code == 0
    response = await answer
    assert response.code == ResponseCode.SUCCESS
    assert [m.body for m in codec.decode_messages(response.body)] == [b"purple"]
