"""What ``make run`` starts: ``rocketq server --metrics-port --dashboard-port`` as a process,
with the name server, the broker, both /metrics and the dashboard answering, then SIGTERM
stops it cleanly (exit 0) by its PID."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def free_ports(count: int) -> list[int]:
    """``count`` loopback ports each free together with the port after it (the broker's HA
    port is its port + 1, the name server's /metrics the metrics port + 1), and no chosen
    port or its successor equal to another's."""
    found: list[int] = []
    taken: set[int] = set()
    while len(found) < count:
        with socket.socket() as first, socket.socket() as second:
            first.bind(("127.0.0.1", 0))
            port = int(first.getsockname()[1])
            if port + 1 >= 65536 or {port, port + 1} & taken:
                continue
            try:
                second.bind(("127.0.0.1", port + 1))
            except OSError:
                continue  # the successor is in use: try another
        found.append(port)
        taken |= {port, port + 1}
    return found


def start_on_free_ports(
    count: int, argv_of: Callable[[list[int]], list[str]], log_path: Path
) -> tuple[subprocess.Popen[bytes], list[int]]:
    """Start ``argv_of(free_ports(count))``; ports chosen free can be taken by another
    process before the server binds them (CI runs other servers meanwhile): a server that
    exits saying a port is in use is started again on other ports (three tries)."""
    for _ in range(3):
        ports = free_ports(count)
        with log_path.open("w") as log:
            proc = subprocess.Popen(argv_of(ports), stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if "dashboard: http://" in log_path.read_text():
                return proc, ports
            time.sleep(0.1)
        if proc.poll() is None or "is in use" not in log_path.read_text():
            return proc, ports
    raise AssertionError(log_path.read_text())


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except OSError:
        return 0, ""


def test_server_process_serves_metrics_and_dashboard_and_stops_on_sigterm(tmp_path: Path) -> None:
    rocketq = str(Path(sys.executable).parent / "rocketq")

    def argv(ports: list[int]) -> list[str]:
        namesrv, broker, metrics, dashboard = ports
        return [
            rocketq, "server", "--store", str(tmp_path / "store"), "--host", "127.0.0.1",
            "--namesrv-port", str(namesrv), "--broker-port", str(broker),
            "--metrics-port", str(metrics), "--dashboard-port", str(dashboard),
            "--grpc-port", "0",
        ]  # fmt: skip

    proc, (_, broker, metrics, dashboard) = start_on_free_ports(4, argv, tmp_path / "server.log")
    try:
        deadline = time.monotonic() + 60
        status = 0
        while time.monotonic() < deadline and proc.poll() is None:
            status, page = get(f"http://127.0.0.1:{dashboard}/cluster")
            if status == 200 and "broker-a" in page:
                break
            time.sleep(0.2)
        assert status == 200, (tmp_path / "server.log").read_text()
        assert f"127.0.0.1:{broker}" in page
        code, text = get(f"http://127.0.0.1:{metrics}/metrics")
        assert code == 200
        assert "rocketmq_broker_permission" in text
        code, text = get(f"http://127.0.0.1:{metrics + 1}/metrics")
        assert code == 200
        assert "rocketmq_namesrv_live_brokers" in text
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, (tmp_path / "server.log").read_text()
    assert "dashboard: http://127.0.0.1:" in (tmp_path / "server.log").read_text()
    # the dashboard's history is kept under the store, saved when it stops
    assert (tmp_path / "store" / "dashboard" / "history" / "fine.bin").exists()


def test_make_run_starts_the_server_with_metrics_and_the_dashboard() -> None:
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    recipe = makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]
    assert "rocketq server" in recipe
    assert re.search(r"--metrics-port \d+", recipe)
    assert re.search(r"--dashboard-port 8080\b", recipe)


def test_server_login_required_needs_users_and_then_asks_for_a_login(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rocketq.cli.main import cli

    store = tmp_path / "store"
    refused = CliRunner().invoke(
        cli, ["server", "--store", str(store), "--dashboard-port", "1", "--login-required"]
    )
    assert refused.exit_code == 2
    assert "users.properties" in refused.output
    (store / "dashboard").mkdir(parents=True)
    (store / "dashboard" / "users.properties").write_text("admin=secret,1\n")
    rocketq = str(Path(sys.executable).parent / "rocketq")

    def argv(ports: list[int]) -> list[str]:
        namesrv, broker, dashboard = ports
        return [
            rocketq, "server", "--store", str(store), "--namesrv-port", str(namesrv),
            "--broker-port", str(broker), "--dashboard-port", str(dashboard),
            "--login-required", "--grpc-port", "0",
        ]  # fmt: skip

    proc, (_, _, dashboard) = start_on_free_ports(3, argv, tmp_path / "server.log")
    try:
        deadline = time.monotonic() + 60
        status, page = 0, ""
        while time.monotonic() < deadline and proc.poll() is None:
            status, page = get(f"http://127.0.0.1:{dashboard}/cluster")
            if status == 200:
                break
            time.sleep(0.2)
        assert status == 200, (tmp_path / "server.log").read_text()
        assert 'name="password"' in page  # the login page, not the cluster
        assert "broker-a" not in page
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, (tmp_path / "server.log").read_text()
