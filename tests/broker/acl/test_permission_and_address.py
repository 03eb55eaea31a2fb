"""Permission bits and address patterns of plain ACL, as RocketMQ's PermissionTest and
RemoteAddressStrategyTest pin them."""

from __future__ import annotations

import pytest

from rocketq.broker.acl.permission import (
    ANY,
    DENY,
    PUB,
    SUB,
    check_permission,
    describe_resource,
    need_admin_perm,
    parse_perm_from_string,
    parse_resource_perms,
    perm_to_string,
)
from rocketq.broker.acl.remote_address import get_remote_address_strategy
from rocketq.errors import ConfigError
from rocketq.remoting.protocol.codes import RequestCode


@pytest.mark.parametrize(
    ("needed", "owned", "allowed"),
    [
        (PUB, PUB, True),
        (PUB, SUB, False),
        (SUB, PUB | SUB, True),
        (PUB, DENY, False),
        (PUB, DENY | PUB, False),
        (ANY, PUB, True),
        (ANY, SUB, True),
        (ANY, DENY, False),
        (SUB, 0, False),
    ],
)
def test_check_permission_follows_the_rocketmq_rule(needed: int, owned: int, allowed: bool) -> None:
    assert check_permission(needed, owned) is allowed


def test_permission_text_parses_all_spellings_and_unknown_text_is_deny() -> None:
    assert parse_perm_from_string("PUB") == PUB
    assert parse_perm_from_string(" SUB ") == SUB
    assert parse_perm_from_string("PUB|SUB") == parse_perm_from_string("SUB|PUB") == PUB | SUB
    assert parse_perm_from_string("DENY") == DENY
    assert parse_perm_from_string("pub") == DENY
    assert parse_perm_from_string(None) == DENY
    assert perm_to_string(PUB | SUB) == "PUB|SUB"


def test_group_permissions_are_keyed_by_the_retry_topic() -> None:
    perms = parse_resource_perms(["groupA=SUB", " groupB = PUB|SUB "], is_topic=False)
    assert perms == {"%RETRY%groupA": SUB, "%RETRY%groupB": PUB | SUB}
    assert describe_resource("%RETRY%groupA") == "group:groupA"
    assert describe_resource("TopicA") == "topic:TopicA"


@pytest.mark.parametrize("item", ["topicA", "topicA=", "=PUB", "topicA=WRITE", "a=b=c", 7])
def test_malformed_resource_permission_is_refused(item: object) -> None:
    with pytest.raises(ConfigError):
        parse_resource_perms([item], is_topic=True)


def test_topic_group_config_and_acl_changes_need_admin_but_sends_do_not() -> None:
    for code in (
        RequestCode.UPDATE_AND_CREATE_TOPIC,
        RequestCode.DELETE_TOPIC_IN_BROKER,
        RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
        RequestCode.DELETE_SUBSCRIPTIONGROUP,
        RequestCode.UPDATE_BROKER_CONFIG,
        RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
        RequestCode.DELETE_ACL_CONFIG,
        RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
        RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG,
    ):
        assert need_admin_perm(code), code
    for code in (RequestCode.SEND_MESSAGE_V2, RequestCode.PULL_MESSAGE, RequestCode.HEART_BEAT):
        assert not need_admin_perm(code)


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        ("*", ["127.0.0.1", "::1"], []),
        ("*.*.*.*", ["10.1.2.3"], []),
        ("127.0.0.1", ["127.0.0.1"], ["127.0.0.2"]),
        ("192.168.0.*", ["192.168.0.1", "192.168.0.255"], ["192.168.1.1"]),
        ("192.168.*.*", ["192.168.7.9"], ["192.169.0.1"]),
        ("192.168.1.1-100", ["192.168.1.1", "192.168.1.100"], ["192.168.1.101", "192.168.2.5"]),
        ("192.168.1.{1,2,3}", ["192.168.1.2"], ["192.168.1.4"]),
        ("10.0.0.1,10.0.0.9", ["10.0.0.9"], ["10.0.0.2"]),
        ("::1", ["::1", "0:0:0:0:0:0:0:1"], ["::2", "127.0.0.1"]),
        ("1050::5:600:300c:*", ["1050::5:600:300c:1"], ["1050::5:600:300d:1"]),
        ("1050:0:0:0:5:600:300c:1-ff", ["1050::5:600:300c:ff"], ["1050::5:600:300c:100"]),
        ("", [], ["127.0.0.1"]),
    ],
)
def test_address_patterns_match_as_rocketmq_documents_them(
    pattern: str, matching: list[str], not_matching: list[str]
) -> None:
    strategy = get_remote_address_strategy(pattern)
    for ip in matching:
        assert strategy.match(ip), (pattern, ip)
    for ip in not_matching:
        assert not strategy.match(ip), (pattern, ip)


@pytest.mark.parametrize(
    "pattern", ["192.168.1", "300.1.1.1", "192.168.1.5-2", "a.b.c.d", "1.2.3.{x,y}", "10.0.0.1,zz"]
)
def test_bad_address_pattern_is_a_config_error_naming_it(pattern: str) -> None:
    with pytest.raises(ConfigError, match="address pattern"):
        get_remote_address_strategy(pattern)
