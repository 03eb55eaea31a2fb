"""``rocketq admin`` registers every command of mqadmin 5.3 with its option letters and long
names (the golden list in ``mqadmin_5_3``); what rocketq cannot serve answers in one line why;
the command list's help is whole; requests are signed from tools.yml against an ACL broker."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from rocketq.cli.admin import admin
from rocketq.testing.acl import ADMIN, AclCluster
from rocketq.testing.admin_cli import run
from tests.cli.mqadmin_5_3 import MQADMIN_5_3


def _declared(command: click.Command) -> set[str]:
    return {opt for p in command.params if isinstance(p, click.Option) for opt in p.opts}


def test_every_mqadmin_5_3_command_is_registered_with_its_option_letters_and_names() -> None:
    assert len(MQADMIN_5_3) == 89
    missing = sorted(set(MQADMIN_5_3) - set(admin.commands))
    assert not missing, missing
    for name, options in MQADMIN_5_3.items():
        declared = _declared(admin.commands[name])
        wanted = {"-n"} | {f"-{short}" for short, _, _ in options}
        # commons-cli accepts a long name with a space ("print msg"); no click option can
        wanted |= {f"--{long}" for _, long, _ in options if " " not in long}
        assert wanted <= declared, (name, sorted(wanted - declared))


def test_multi_letter_short_options_are_single_options() -> None:
    for name, letters in [
        ("electMaster", "-bn"),
        ("cleanBrokerMetadata", "-bn"),
        ("updateStaticTopic", "-qn"),
        ("checkRocksdbCqWriteProgress", "-cf"),
    ]:
        assert letters in _declared(admin.commands[name]), name


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["createUser", "-u", "alice", "-p", "secret", "-c", "DefaultCluster"], "ACL 2.0"),
        (["updateStaticTopic", "-t", "T", "-qn", "8", "-c", "DefaultCluster"], "static topics"),
        (["rocksDBConfigToJson", "-t", "topics", "-p", "/tmp/x"], "RocksDB"),
        (["haStatus", "-c", "DefaultCluster"], "GET_BROKER_HA_STATUS"),
    ],
)
def test_a_command_rocketq_cannot_serve_answers_why_in_one_line(argv: list[str], why: str) -> None:
    result = CliRunner().invoke(admin, argv)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"Error: {argv[0]} is not supported by rocketq: ")
    assert why in lines[0]


def test_the_command_list_shows_each_first_line_whole() -> None:
    result = CliRunner().invoke(admin, ["-h"], terminal_width=200)
    assert result.exit_code == 0
    listing = result.output.split("Commands:")[1]
    assert "..." not in listing  # click's mark of a cut help line
    flat = " ".join(listing.split())
    for name in ("updateTopic", "createUser", "exportMetadata"):
        first_line = admin.commands[name].get_short_help_str(limit=1000)
        assert f"{name} {first_line}" in flat, name


async def test_admin_signs_with_the_account_of_tools_yml(
    acl_cluster: AclCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("ROCKETQ_ACCESS_KEY", "ROCKETQ_SECRET_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ROCKETMQ_HOME", str(tmp_path))
    argv = ["updateTopic", "-b", acl_cluster.broker_addr, "-t", "SignedTopic"]
    unsigned = await run(acl_cluster, *argv)
    assert unsigned.exit_code == 1, unsigned.output
    assert acl_cluster.broker.topic_config_manager.select_topic_config("SignedTopic") is None
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "tools.yml").write_text(
        f"accessKey: {ADMIN[0]}\nsecretKey: {ADMIN[1]}\n", encoding="utf-8"
    )
    signed = await run(acl_cluster, *argv)
    assert signed.exit_code == 0, signed.output
    assert acl_cluster.broker.topic_config_manager.select_topic_config("SignedTopic") is not None
    wrong = await run(acl_cluster, *argv, "--ak", ADMIN[0], "--sk", "not-the-secret")
    assert wrong.exit_code == 1
    assert re.search(r"signature|NO_PERMISSION|not match", wrong.output, re.I), wrong.output
