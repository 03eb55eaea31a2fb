"""What ``make run`` starts: ``rocketq server --metrics-port --dashboard-port`` as a process,
with the name server, the broker, both /metrics and the dashboard answering, then SIGTERM
stops it cleanly (exit 0) by its PID."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def free_ports(count: int) -> list[int]:
    """``count`` free loopback ports, consecutive pairs not needed except for metrics (+1)."""
    found: list[int] = []
    while len(found) < count:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port + 1 < 65536 and port not in found and port + 1 not in found:
            found.append(port)
    return found


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except OSError:
        return 0, ""


def test_server_process_serves_metrics_and_dashboard_and_stops_on_sigterm(tmp_path: Path) -> None:
    namesrv, broker, metrics, dashboard = free_ports(4)
    rocketq = str(Path(sys.executable).parent / "rocketq")
    argv = [
        rocketq, "server", "--store", str(tmp_path / "store"), "--host", "127.0.0.1",
        "--namesrv-port", str(namesrv), "--broker-port", str(broker),
        "--metrics-port", str(metrics), "--dashboard-port", str(dashboard),
    ]  # fmt: skip
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
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
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        log.close()
    assert "dashboard: http://127.0.0.1:" in (tmp_path / "server.log").read_text()
