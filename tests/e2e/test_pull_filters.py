"""Where each pull filter runs (remoting/protocol/subscription.py): the broker by tags code, the
client by the exact TAGS string; an expression that does not parse is refused with RocketMQ's
code."""

from __future__ import annotations

import pytest

from rocketq.common.hashing import java_string_hash
from rocketq.common.message_decoder import decode_messages
from rocketq.remoting.protocol.subscription import build_subscription_data, is_tag_matched
from rocketq.response_code import ResponseCode
from rocketq.testing.cluster import Cluster
from rocketq.testing.wire import pull_request

pytestmark = pytest.mark.e2e
WAIT = 10.0


async def test_the_broker_filters_by_hash_and_the_client_drops_a_colliding_tag(
    cluster: Cluster,
) -> None:
    assert java_string_hash("Aa") == java_string_hash("BB")  # String.hashCode collides
    for tags in ("Aa", "BB", "Cc"):
        await cluster.send_raw("Collide", tags.encode(), tags=tags)
    pull = pull_request("GC", "Collide", 0, 0, expression="Aa")
    response = await cluster.client.invoke(cluster.broker_addr, pull, WAIT)
    assert response.code == ResponseCode.SUCCESS
    records = decode_messages(response.body)
    assert [m.tags for m in records] == ["Aa", "BB"]  # one code: the broker cannot tell
    subscription = build_subscription_data("Collide", "Aa")
    assert [m.body for m in records if is_tag_matched(subscription, m.tags)] == [b"Aa"]


async def test_a_pull_whose_expression_has_no_tag_is_refused_as_unparsable(
    cluster: Cluster,
) -> None:
    await cluster.send_raw("Unparsable", b"x", tags="A")
    pull = pull_request("GU", "Unparsable", 0, 0, expression="||")
    response = await cluster.client.invoke(cluster.broker_addr, pull, WAIT)
    assert response.code == ResponseCode.SUBSCRIPTION_PARSE_FAILED
    assert "has no tag" in (response.remark or "")
