"""``rocketq server -c broker.conf`` (what ``make run`` passes): ``updateBrokerConfig`` writes
the change into that file, as RocketMQ's broker persists its Configuration, and the next
start reads it back."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rocketq.cli.admin import admin
from rocketq.testing.cli_process import CLI_PROGRAM

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]
REPO = Path(__file__).resolve().parents[2]


def boot(args: list[str]) -> tuple[subprocess.Popen[str], str, str]:
    """The server process, its name server's and its broker's address (from its boot lines:
    it runs on port 0, so no port is picked before it binds)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI_PROGRAM, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    namesrv = ""
    for line in proc.stdout:
        found = re.search(r"name server listening on \S*:(\d+)", line)
        if found:
            namesrv = f"127.0.0.1:{found.group(1)}"
        found = re.search(r"broker broker-a .* listening on (\S+),", line)
        if found:
            return proc, namesrv, found.group(1)
    raise AssertionError(f"the server exited with {proc.wait()}")


def stop(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGTERM)
    proc.communicate(timeout=30)  # drains and closes stdout
    assert proc.returncode == 0


def admin_ok(*args: str) -> str:
    result = CliRunner().invoke(admin, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_update_broker_config_is_written_to_the_c_file_and_read_back_at_start(
    tmp_path: Path,
) -> None:
    store, conf = tmp_path / "store", tmp_path / "store" / "broker.conf"
    args = [
        "server", "--store", str(store), "-c", str(conf),
        "--namesrv-port", "0", "--broker-port", "0", "--grpc-port", "0",
    ]  # fmt: skip
    proc, ns, addr = boot(args)
    try:
        assert conf.exists()
        admin_ok("updateBrokerConfig", "-n", ns, "-b", addr, "-k", "brokerPermission", "-v", "4")
        assert "brokerPermission=4" in conf.read_text().splitlines()
    finally:
        stop(proc)
    proc, ns, addr = boot(args)  # the new ports: the file, not the address, carries it
    try:
        shown = json.loads(admin_ok("getBrokerConfig", "-n", ns, "-b", addr, "--json"))
        assert shown[addr]["brokerPermission"] == "4"
    finally:
        stop(proc)


def test_make_run_passes_a_config_file_under_the_store() -> None:
    recipe = (REPO / "Makefile").read_text().split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "rocketq server --store $(STORE) -c $(STORE)/broker.conf" in recipe
