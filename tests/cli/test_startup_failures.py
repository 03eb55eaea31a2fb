"""A server that cannot start says why in one line, with the option that fixes it: a port in
use names the option that changes it, a locked store names the process holding it; no
traceback. Real processes (``rocketq server``, ``namesrv``, ``broker``); every port but the
busy one is 0 (a port picked free could be taken before the server binds it)."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.testing.cli_process import CLI_PROGRAM

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(90)]

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
print("locked", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        yield int(s.getsockname()[1])


@pytest.fixture
def locked_store(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    root = tmp_path / "store"
    root.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root / "lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"
    yield root, holder.pid
    holder.kill()
    holder.communicate(timeout=10)


def fail(*args: str) -> str:
    """Run ``rocketq args``; it must fail; its one error line (and no traceback)."""
    proc = subprocess.run(
        [sys.executable, "-c", CLI_PROGRAM, *args], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, proc.stderr
    assert proc.stderr.rstrip().endswith(errors[0]), proc.stderr
    return errors[0]


def test_server_with_its_name_server_port_in_use_names_the_option(busy_port: int) -> None:
    line = fail(
        "server", "--namesrv-port", str(busy_port), "--broker-port", "0", "--grpc-port", "0",
    )  # fmt: skip
    assert f"port {busy_port} is in use" in line
    assert "--namesrv-port" in line


def test_server_with_its_broker_port_in_use_names_the_option(
    tmp_path: Path, busy_port: int
) -> None:
    line = fail(
        "server", "--store", str(tmp_path / "s"), "--namesrv-port", "0",
        "--broker-port", str(busy_port), "--grpc-port", "0",
    )  # fmt: skip
    assert f"port {busy_port} is in use" in line
    assert "--broker-port" in line


def test_server_on_a_locked_store_names_the_process_holding_it(
    locked_store: tuple[Path, int],
) -> None:
    root, pid = locked_store
    line = fail(
        "server", "--store", str(root), "--namesrv-port", "0", "--broker-port", "0",
        "--grpc-port", "0",
    )  # fmt: skip
    assert f"in use by process {pid}" in line
    assert "--store" in line


def test_namesrv_with_its_port_in_use_names_the_option(busy_port: int) -> None:
    line = fail("namesrv", "-p", str(busy_port))
    assert f"port {busy_port} is in use" in line
    assert "-p/--port" in line


def test_broker_on_a_locked_store_names_the_process_holding_it(
    locked_store: tuple[Path, int],
) -> None:
    root, pid = locked_store
    line = fail("broker", "--store", str(root), "-p", "0")
    assert f"in use by process {pid}" in line


def test_dashboard_with_its_port_in_use_names_the_option(busy_port: int) -> None:
    line = fail("dashboard", "--host", "0.0.0.0", "--port", str(busy_port))
    assert f"port {busy_port} is in use" in line
    assert "--port" in line
