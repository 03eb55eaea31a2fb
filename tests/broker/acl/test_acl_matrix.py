"""The ACL matrix through the wire: principals x request codes against a broker with
``aclEnable=true``; every refusal is NO_PERMISSION naming the account and the resource, and
nothing a refused request carried is stored."""

from __future__ import annotations

import pytest

from rocketq.common.message_decoder import decode_messages
from rocketq.remoting.acl import sign_request
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.acl import (
    ADMIN,
    NORMAL,
    PUB_ONLY,
    SUB_ONLY,
    WHITE,
    AclCluster,
    signed,
)
from rocketq.testing.wire import heartbeat, pull_request, send_request
from tests.broker.acl.acl_requests import REQUESTS, runtime_info

UNKNOWN = ("NobodyAK1", "NobodySK1")
WRONG_SECRET = (NORMAL[0], "not-the-secret")
WHITE_WRONG_SECRET = (WHITE[0], "not-the-secret")


# what each principal may do (True = allowed), and the resource named when refused
MATRIX: dict[str, tuple[tuple[str, str] | None, dict[str, bool]]] = {
    "admin": (ADMIN, dict.fromkeys(REQUESTS, True)),
    "pub_only": (
        PUB_ONLY,
        {"send": True, "pull": False, "heartbeat": False, "offset": False}
        | {"create_topic": False, "runtime_info": True},
    ),
    "sub_only": (
        SUB_ONLY,
        {"send": False, "pull": True, "heartbeat": True, "offset": True}
        | {"create_topic": False, "runtime_info": True},
    ),
    "normal": (NORMAL, dict.fromkeys(REQUESTS, True) | {"create_topic": False}),
    "white_address": (WHITE_WRONG_SECRET, dict.fromkeys(REQUESTS, True)),
    "unknown_key": (UNKNOWN, dict.fromkeys(REQUESTS, False)),
    "wrong_secret": (WRONG_SECRET, dict.fromkeys(REQUESTS, False)),
    "unsigned": (None, dict.fromkeys(REQUESTS, False)),
}

EXPECTED_REMARK = {
    ("pub_only", "pull"): "topic:TopicA",
    ("pub_only", "heartbeat"): "accessKey=PubOnlyAK",
    ("sub_only", "send"): "No PUB permission for topic:TopicA: accessKey=SubOnlyAK",
    ("pub_only", "create_topic"): "request code=17, but accessKey=PubOnlyAK is not an admin",
    ("normal", "create_topic"): "accessKey=RocketMQ is not an admin",
    ("unknown_key", "send"): "No acl config for accessKey=NobodyAK1",
    ("wrong_secret", "send"): "Check signature failed for accessKey=RocketMQ",
    ("unsigned", "send"): "No accessKey is configured",
}


def build(principal: str, name: str) -> RemotingCommand:
    account = MATRIX[principal][0]
    cmd = REQUESTS[name](principal)
    return cmd if account is None else signed(cmd, account)


@pytest.mark.parametrize("principal", sorted(MATRIX))
async def test_each_principal_gets_exactly_its_permissions(
    acl_cluster: AclCluster, principal: str
) -> None:
    for name, allowed in MATRIX[principal][1].items():
        response = await acl_cluster.invoke(build(principal, name))
        if allowed:
            assert response.code != ResponseCode.NO_PERMISSION, (name, response.remark)
            if name in ("send", "create_topic", "heartbeat", "offset"):
                assert response.code == ResponseCode.SUCCESS, (name, response.remark)
        else:
            assert response.code == ResponseCode.NO_PERMISSION, (name, response.remark)
            assert "SK" not in (response.remark or ""), "a refusal never echoes a secret"
            expected = EXPECTED_REMARK.get((principal, name))
            if expected is not None:
                assert expected in (response.remark or ""), response.remark


async def test_nothing_a_refused_request_carried_is_stored(acl_cluster: AclCluster) -> None:
    for principal in sorted(MATRIX):
        for name in REQUESTS:
            await acl_cluster.invoke(build(principal, name))
    await acl_cluster.dispatched()  # an answered send is read back only once dispatched
    broker = acl_cluster.broker
    created = {
        t for t in broker.topic_config_manager.topic_config_table if t.startswith("Created-")
    }
    assert created == {"Created-admin", "Created-white_address"}
    stored = set()
    for queue_id in range(8):
        pull = signed(pull_request("GroupA", "TopicA", queue_id, 0, suspend_ms=0), ADMIN)
        response = await acl_cluster.invoke(pull)
        if response.code == ResponseCode.SUCCESS:
            stored |= {m.body.decode() for m in decode_messages(response.body)}
    allowed_senders = {p for p, (_, cells) in MATRIX.items() if cells["send"]}
    assert stored == {f"from-{p}" for p in allowed_senders}
    offsets = broker.consumer_offset_manager.query_offsets("GroupA", "TopicA")
    refused_offsets = {700 + len(p) for p, (_, cells) in MATRIX.items() if not cells["offset"]}
    allowed_offsets = {700 + len(p) for p, (_, cells) in MATRIX.items() if cells["offset"]}
    assert offsets.get(0) in allowed_offsets - refused_offsets


async def test_a_refused_heartbeat_registers_no_consumer_and_no_group(
    acl_cluster: AclCluster,
) -> None:
    broker = acl_cluster.broker
    for account in (None, PUB_ONLY, WRONG_SECRET):
        cmd = heartbeat("127.0.0.1@refused", "GroupZ", "TopicA")
        response = await acl_cluster.invoke(cmd if account is None else signed(cmd, account))
        assert response.code == ResponseCode.NO_PERMISSION, response.remark
    assert broker.consumer_manager.get_consumer_group_info("GroupZ") is None
    assert "GroupZ" not in broker.subscription_group_manager.subscription_group_table
    ok = await acl_cluster.invoke(signed(heartbeat("127.0.0.1@admin", "GroupZ", "TopicA"), ADMIN))
    assert ok.code == ResponseCode.SUCCESS
    info = broker.consumer_manager.get_consumer_group_info("GroupZ")
    assert info is not None
    assert info.all_client_ids() == ["127.0.0.1@admin"]


async def test_a_refused_oneway_request_gets_no_answer_and_stores_nothing(
    acl_cluster: AclCluster,
) -> None:
    cmd = signed(REQUESTS["send"]("oneway-refused"), SUB_ONLY)
    await acl_cluster.client.invoke_oneway(acl_cluster.broker_addr, cmd)
    allowed = await acl_cluster.invoke(signed(runtime_info(), NORMAL))
    assert allowed.code == ResponseCode.SUCCESS
    assert acl_cluster.broker.access_validator is not None
    assert acl_cluster.broker.access_validator.refused_count >= 1
    response = await acl_cluster.invoke(
        signed(pull_request("GroupA", "TopicA", 0, 0, suspend_ms=0), ADMIN)
    )
    if response.code == ResponseCode.SUCCESS:
        bodies = {m.body for m in decode_messages(response.body)}
        assert b"from-oneway-refused" not in bodies


async def test_query_by_unique_key_verifies_with_or_without_the_flag_signed(
    acl_cluster: AclCluster,
) -> None:
    fields = {"topic": "TopicA", "key": "k", "maxNum": "1", "beginTimestamp": "0"}
    fields["endTimestamp"] = "9999999999999"
    before = signed(RemotingCommand.create_request(RequestCode.QUERY_MESSAGE, fields), NORMAL)
    before.ext_fields["_UNIQUE_KEY_QUERY"] = "true"  # added after signing, as 4.x verifies
    after = RemotingCommand.create_request(
        RequestCode.QUERY_MESSAGE, {**fields, "_UNIQUE_KEY_QUERY": "true"}
    )
    for cmd in (before, signed(after, NORMAL)):
        response = await acl_cluster.invoke(cmd)
        assert response.code != ResponseCode.NO_PERMISSION, response.remark


async def test_a_security_token_is_signed_with_the_request_and_cannot_be_altered(
    acl_cluster: AclCluster,
) -> None:
    cmd = send_request("TopicA", b"token", code=RequestCode.SEND_MESSAGE_V2)
    sign_request(cmd, NORMAL[0], NORMAL[1], security_token="session-token-1")
    assert (await acl_cluster.invoke(cmd)).code == ResponseCode.SUCCESS
    cmd = send_request("TopicA", b"token", code=RequestCode.SEND_MESSAGE_V2)
    sign_request(cmd, NORMAL[0], NORMAL[1], security_token="session-token-1")
    cmd.ext_fields["SecurityToken"] = "session-token-2"
    refused = await acl_cluster.invoke(cmd)
    assert refused.code == ResponseCode.NO_PERMISSION
    assert "Check signature failed for accessKey=RocketMQ" in (refused.remark or "")
