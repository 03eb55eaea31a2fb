from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rocketq.cli.broker import broker, load_broker_config
from rocketq.cli.main import cli
from rocketq.cli.server import server


def test_broker_and_server_commands_are_listed_and_document_their_options() -> None:
    runner = CliRunner()
    listing = runner.invoke(cli, ["--help"])
    assert "broker" in listing.output
    assert "server" in listing.output
    help_text = runner.invoke(broker, ["--help"]).output
    assert "--namesrv-addr" in help_text
    assert "--config-file" in help_text
    assert "--store" in runner.invoke(server, ["--help"]).output


def test_command_line_overrides_broker_conf(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text("brokerName=b7\nlistenPort=10999\nnamesrvAddr=10.0.0.1:9876\n")
    c = load_broker_config(str(conf), "127.0.0.1:9877", 0, str(tmp_path / "s"))
    assert (c.broker_name, c.listen_port, c.namesrv_addr) == ("b7", 0, "127.0.0.1:9877")
    assert c.store_path_root_dir == str(tmp_path / "s")
    plain = load_broker_config(str(conf), None, None, None)
    assert (plain.listen_port, plain.namesrv_addr) == (10999, "10.0.0.1:9876")


def test_namesrv_addr_falls_back_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAMESRV_ADDR", "127.0.0.1:9999")
    assert load_broker_config(None, None, None, None).namesrv_addr == "127.0.0.1:9999"
    assert load_broker_config(None, None, None, None).listen_port == 10911
