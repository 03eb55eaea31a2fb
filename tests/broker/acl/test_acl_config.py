"""``aclEnable`` in broker.conf, where plain_acl.yml is looked for, and how it parses."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.broker import BrokerConfig
from rocketq.broker.acl.access_validator import default_acl_file
from rocketq.broker.acl.permission import DENY, PUB, SUB
from rocketq.broker.acl.plain_acl_config import parse_plain_acl
from rocketq.errors import ConfigError
from rocketq.testing import run_broker
from rocketq.testing.acl import ACCOUNTS, write_acl

# RocketMQ 4.9's distribution/conf/plain_acl.yml, as shipped
DISTRIBUTION_PLAIN_ACL = b"""
globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.*

accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
    groupPerms:
      # the group should convert to retry topic
      - groupA=DENY
      - groupB=PUB|SUB
      - groupC=SUB

  - accessKey: rocketmq2
    secretKey: 12345678
    whiteRemoteAddress: 192.168.1.*
    # if it is admin, it could access all resources
    admin: true
"""


def test_acl_enable_in_broker_conf_turns_the_check_on() -> None:
    assert BrokerConfig.from_properties({"aclEnable": "true"}).acl_enable
    assert not BrokerConfig.from_properties({}).acl_enable
    with pytest.raises(ConfigError, match="aclEnable"):
        BrokerConfig.from_properties({"aclEnable": "yes"})


def test_the_distribution_plain_acl_yml_parses_as_rocketmq_reads_it() -> None:
    config = parse_plain_acl(DISTRIBUTION_PLAIN_ACL, "plain_acl.yml")
    assert config.global_white_addrs == ("10.10.103.*", "192.168.0.*")
    assert config.global_white_strategies[0].match("10.10.103.7")
    first = config.accounts["RocketMQ"]
    assert first.secret_key == "12345678"  # a YAML number read as text
    assert first.default_topic_perm == DENY
    assert first.default_group_perm == SUB
    assert first.resource_perm_map == {
        "topicA": DENY,
        "topicB": PUB | SUB,
        "topicC": SUB,
        "%RETRY%groupA": DENY,
        "%RETRY%groupB": PUB | SUB,
        "%RETRY%groupC": SUB,
    }
    assert not first.remote_address_strategy.match("127.0.0.1")  # blank matches nothing
    second = config.accounts["rocketmq2"]
    assert second.admin
    assert second.remote_address_strategy.match("192.168.1.20")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b"accounts: [ {accessKey: x", "not valid YAML"),
        (b"- a\n- b\n", "mapping at the top"),
        (b"accounts:\n  - {accessKey: Abcdefgh, secretKey: 123}\n", "longer than 6"),
        (b"accounts: 7\n", "must be a list"),
        (b"globalWhiteRemoteAddresses: [1.2.3]\n", "address pattern"),
        (
            b"accounts:\n  - {accessKey: Abcdefgh, secretKey: Abcdefgh}\n"
            b"  - {accessKey: Abcdefgh, secretKey: Zyxwvuts}\n",
            "defined twice",
        ),
    ],
)
def test_a_bad_acl_file_is_a_config_error_that_says_why(text: bytes, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        parse_plain_acl(text, "plain_acl.yml")


def test_an_empty_or_missing_file_has_no_accounts() -> None:
    assert parse_plain_acl(b"", "plain_acl.yml").accounts == {}
    assert parse_plain_acl(b"# only a comment\n", "plain_acl.yml").accounts == {}


def test_the_store_config_folder_wins_then_rocketmq_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    home = tmp_path / "home"
    monkeypatch.setenv("ROCKETMQ_HOME", str(home))
    assert default_acl_file(store) == store / "config" / "plain_acl.yml"
    write_acl(home / "conf" / "plain_acl.yml", ACCOUNTS)
    assert default_acl_file(store) == home / "conf" / "plain_acl.yml"
    write_acl(store / "config" / "plain_acl.yml", ACCOUNTS)
    assert default_acl_file(store) == store / "config" / "plain_acl.yml"


async def test_a_broker_reads_the_acl_file_under_rocketmq_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("ROCKETMQ_HOME", str(home))
    write_acl(home / "conf" / "plain_acl.yml", ACCOUNTS)
    async with run_broker(tmp_path / "store", acl_enable=True) as broker:
        assert broker.access_validator is not None
        manager = broker.access_validator.manager
        assert manager.path == home / "conf" / "plain_acl.yml"
        assert set(manager.config.accounts) == {a["accessKey"] for a in ACCOUNTS}
