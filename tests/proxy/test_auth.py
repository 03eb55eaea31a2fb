"""The ``authorization`` header of the 5.x clients against plain ACL accounts (rocketq.proxy.auth):
header values as the Python and Node clients write them, each refusal reason, the resources
of each request kind, and the ACL 2.0 switches refused at start."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from rocketq.broker.acl.permission import PUB, SUB
from rocketq.broker.acl.plain_acl_config import parse_plain_acl
from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.errors import AclError, ConfigError
from rocketq.proxy.auth import (
    AuthorizationHeader,
    GrpcAccessValidator,
    authorization_value,
    check_request,
    grpc_resources,
    refuse_acl2_keys,
    sign,
)
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as svc
from rocketq.testing.acl import ACCOUNTS, NORMAL, PUB_ONLY, SUB_ONLY, WHITE

DATE = "20261127T232100Z"
PEER = "10.1.2.3:50123"


CONFIG = parse_plain_acl(yaml.safe_dump({"accounts": ACCOUNTS}).encode(), Path("plain_acl.yml"))


def headers(access_key: str, secret_key: str, *, date: str = DATE) -> dict[str, str]:
    return {
        "authorization": authorization_value(access_key, secret_key, date),
        "x-mq-date-time": date,
        "x-mq-client-id": "host@1@0@abc",
    }


def send(topic: str) -> svc.SendMessageRequest:
    return svc.SendMessageRequest(messages=[pb.Message(topic=pb.Resource(name=topic), body=b"x")])


def receive(group: str, topic: str) -> svc.ReceiveMessageRequest:
    return svc.ReceiveMessageRequest(
        group=pb.Resource(name=group),
        message_queue=pb.MessageQueue(topic=pb.Resource(name=topic)),
    )


def test_signature_is_hmac_sha1_of_the_datetime_in_hex() -> None:
    # `printf 20261127T232100Z | openssl dgst -sha1 -hmac 12345678`
    assert sign("12345678", DATE) == "78108ed306662fd1266287010aa45ab5fe4fcdab"
    assert authorization_value("RocketMQ", "12345678", DATE) == (
        "MQv2-HMAC-SHA1 Credential=RocketMQ, SignedHeaders=x-mq-date-time, "
        "Signature=78108ed306662fd1266287010aa45ab5fe4fcdab"
    )


def test_header_parses_as_java_does() -> None:
    sig = sign("12345678", DATE)
    parsed = AuthorizationHeader.parse(
        f"MQv2-HMAC-SHA1 Credential=RocketMQ/region/channel, SignedHeaders=x-mq-date-time, "
        f"Signature={sig.upper()}"
    )
    assert parsed.method == "MQv2-HMAC-SHA1"
    assert parsed.access_key == "RocketMQ"
    assert parsed.signed_headers == ("x-mq-date-time",)
    assert parsed.signature == bytes.fromhex(sig)  # upper-case hex (Node) decodes the same


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("MQv2-HMAC-SHA1", "authorization header is incorrect"),
        ("MQv2-HMAC-SHA1 Credential", "keyValues length is incorrect"),
        ("MQv2-HMAC-SHA1 Credential=a, Signature=zz", "not hex"),
    ],
)
def test_malformed_headers_are_refused(header: str, reason: str) -> None:
    with pytest.raises(AclError, match=reason):
        AuthorizationHeader.parse(header)


def test_empty_credentials_parse_to_no_access_key() -> None:
    # what the Python client sends without credentials: refused only when ACL is on
    parsed = AuthorizationHeader.parse(authorization_value("", "", DATE))
    assert parsed.access_key == ""
    with pytest.raises(AclError, match="No accessKey"):
        check_request(CONFIG, headers("", ""), send("TopicA"), PEER)


def test_a_known_account_with_the_right_secret_passes() -> None:
    assert check_request(CONFIG, headers(*NORMAL), send("TopicA"), PEER) == NORMAL[0]
    upper = headers(*NORMAL)  # Node writes the signature in upper-case hex
    upper["authorization"] = upper["authorization"].replace(
        sign(NORMAL[1], DATE), sign(NORMAL[1], DATE).upper()
    )
    assert check_request(CONFIG, upper, send("TopicA"), PEER) == NORMAL[0]


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        (headers(NORMAL[0], "wrong-secret"), "Check signature failed for accessKey=RocketMQ"),
        (headers("NobodyAK", "NobodySK"), "No acl config for accessKey=NobodyAK"),
        ({"x-mq-date-time": DATE}, "is not signed"),
        ({"authorization": authorization_value(*NORMAL, DATE)}, "is not signed"),
    ],
)
def test_refusals_name_the_reason(meta: dict[str, str], reason: str) -> None:
    with pytest.raises(AclError, match=reason):
        check_request(CONFIG, meta, send("TopicA"), PEER)


def test_the_signature_covers_the_datetime_header() -> None:
    meta = headers(*NORMAL)
    meta["x-mq-date-time"] = "20261127T232101Z"  # replayed signature, other time
    with pytest.raises(AclError, match="Check signature failed"):
        check_request(CONFIG, meta, send("TopicA"), PEER)


def test_permissions_of_the_resources_apply() -> None:
    check_request(CONFIG, headers(*PUB_ONLY), send("TopicA"), PEER)
    with pytest.raises(AclError, match="No PUB permission"):
        check_request(CONFIG, headers(*PUB_ONLY), send("TopicB"), PEER)
    with pytest.raises(AclError, match="No SUB permission"):
        check_request(CONFIG, headers(*PUB_ONLY), receive("GroupA", "TopicA"), PEER)
    with pytest.raises(AclError, match="PUB"):
        check_request(CONFIG, headers(*SUB_ONLY), send("TopicA"), PEER)


def test_an_account_trusted_by_address_skips_the_signature() -> None:
    meta = headers(WHITE[0], "not-its-secret")  # its whiteRemoteAddress is 127.0.0.*
    assert check_request(CONFIG, meta, svc.QueryRouteRequest(), "127.0.0.9:1234") == WHITE[0]
    with pytest.raises(AclError, match="Check signature failed"):
        check_request(CONFIG, meta, send("TopicA"), PEER)


def test_resources_of_each_request_kind() -> None:
    assert grpc_resources(send("T")) == {"T": PUB}
    assert grpc_resources(receive("G", "T")) == {"%RETRY%G": SUB, "T": SUB}
    ack = svc.AckMessageRequest(group=pb.Resource(name="G"), topic=pb.Resource(name="T"))
    assert grpc_resources(ack) == {"%RETRY%G": SUB, "T": SUB}
    end = svc.EndTransactionRequest(topic=pb.Resource(name="T", resource_namespace="ns"))
    assert grpc_resources(end) == {"ns%T": PUB}
    assert grpc_resources(svc.HeartbeatRequest()) == {}
    beat = svc.HeartbeatRequest(group=pb.Resource(name="G"))
    assert grpc_resources(beat) == {"%RETRY%G": SUB}
    settings = pb.Settings(
        subscription=pb.Subscription(
            group=pb.Resource(name="G"),
            subscriptions=[pb.SubscriptionEntry(topic=pb.Resource(name="T"))],
        )
    )
    assert grpc_resources(svc.TelemetryCommand(settings=settings)) == {"%RETRY%G": SUB, "T": SUB}
    publishing = pb.Settings(publishing=pb.Publishing(topics=[pb.Resource(name="T")]))
    assert grpc_resources(svc.TelemetryCommand(settings=publishing)) == {"T": PUB}
    assert grpc_resources(svc.QueryRouteRequest(topic=pb.Resource(name="T"))) == {}


def test_a_send_of_mixed_topics_or_none_is_refused() -> None:
    with pytest.raises(AclError, match="messageCount is zero"):
        grpc_resources(svc.SendMessageRequest())
    mixed = svc.SendMessageRequest(
        messages=[pb.Message(topic=pb.Resource(name=t), body=b"x") for t in ("A", "B")]
    )
    with pytest.raises(AclError, match="not consistent"):
        grpc_resources(mixed)


async def test_the_validator_reads_the_reloaded_accounts(tmp_path: Path) -> None:
    path = tmp_path / "plain_acl.yml"
    path.write_text(yaml.safe_dump({"accounts": ACCOUNTS}))
    manager = PlainPermissionManager(path, watch_interval_s=0.05)
    manager.load()
    validator = GrpcAccessValidator(manager)
    assert validator.validate(headers(*NORMAL), send("TopicA"), PEER) == NORMAL[0]
    changed = [
        dict(a, secretKey="87654321") if a["accessKey"] == NORMAL[0] else a for a in ACCOUNTS
    ]
    path.write_text(yaml.safe_dump({"accounts": changed}))
    for _ in range(100):
        if await manager.reload_if_changed():
            break
        await asyncio.sleep(0.01)
    with pytest.raises(AclError, match="Check signature failed"):
        validator.validate(headers(*NORMAL), send("TopicA"), PEER)
    assert validator.validate(headers(NORMAL[0], "87654321"), send("TopicA"), PEER) == NORMAL[0]
    assert (validator.allowed_count, validator.refused_count) == (2, 1)


@pytest.mark.parametrize(
    "props",
    [
        {"authenticationEnabled": "true"},
        {"authorizationEnabled": True},
        {"aclEnable": "true", "authorizationEnabled": " TRUE"},
    ],
)
def test_acl2_switches_are_refused_in_one_line_naming_acl_enable(props: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="aclEnable") as info:
        refuse_acl2_keys(props, "broker.conf")
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("broker.conf: ")


def test_acl2_switches_off_or_absent_pass() -> None:
    refuse_acl2_keys({"authenticationEnabled": "false", "aclEnable": "true"}, "broker.conf")
    refuse_acl2_keys({"authorizationEnabled": False}, "rmq-proxy.json")
    refuse_acl2_keys({}, "rmq-proxy.json")
