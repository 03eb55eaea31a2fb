"""The README never lies: every fenced block marked ``test`` (```` ```python test ```` and
```` ```sh test ````) runs, in order, against a live name server and broker; the documented
addresses (127.0.0.1:9876 and :10911) are swapped for the test servers' ports."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rocketq.testing.cluster import Cluster
from rocketq.testing.dashboard import run_dashboard

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```(\w+) test\n(.*?)^```$", re.M | re.S)
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(README.read_text())]


def test_the_readme_has_python_and_shell_blocks_to_test() -> None:
    kinds = [kind for kind, _ in blocks()]
    assert kinds.count("python") >= 2
    assert kinds.count("sh") >= 2


def run_block(
    kind: str, code: str, cluster: Cluster, dashboard: str
) -> subprocess.CompletedProcess[str]:
    code = code.replace("127.0.0.1:9876", cluster.addr)
    code = code.replace("127.0.0.1:10911", cluster.broker.broker_addr)
    code = code.replace("http://127.0.0.1:8080", dashboard)
    env = dict(os.environ, NAMESRV_ADDR=cluster.addr, PYSPARK_PYTHON=sys.executable)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    argv = (
        [sys.executable, "-c", code]
        if kind == "python"
        else ["bash", "-euo", "pipefail", "-c", code]
    )
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)


async def test_every_readme_block_runs_against_live_servers(cluster: Cluster) -> None:
    outputs = []
    async with run_dashboard(cluster.addr) as dashboard:
        for kind, code in blocks():
            done = await asyncio.to_thread(run_block, kind, code, cluster, dashboard)
            assert done.returncode == 0, (
                f"{kind} block failed:\n{code}\n{done.stdout}\n{done.stderr}"
            )
            outputs.append(done.stdout)
    text = "\n".join(outputs)
    assert "create topic to" in text
    assert "SEND_OK" in text
    assert "b'hello rocketq'" in text
    assert "b'hello asyncio'" in text
    assert "[b'hello asyncio', b'hello rocketq']" in text  # Spark's read of DemoTopic
    assert "DefaultCluster" in text
    assert '"msgPutTotalTodayNow"' in text
    assert "broker-a\nhello rocketq\ndemo-push\n" in text  # the dashboard's pages, by curl
    assert "order-1 in queues {3}" in text  # one message group, one queue
    assert "fifo [b'step 0', b'step 1', b'step 2']" in text  # a FIFO SimpleConsumer


def test_docs_configuration_lists_every_broker_conf_key_we_honour() -> None:
    from rocketq.broker.config import BROKER_KEYS
    from rocketq.store.config import STORE_KEYS

    doc = (README.parent / "docs" / "configuration.md").read_text()
    missing = [key for key in [*BROKER_KEYS, *STORE_KEYS] if f"`{key}`" not in doc]
    assert not missing, f"docs/configuration.md lacks {missing}"


# issue 19: the "RocketMQ 5 clients" blocks (```sh rmq5, ```python rmq5) run in order with the
# official 5.x Python client's own venv (.venv-rmq5, made by `make interop-rmq5`) against a gRPC
# endpoint over the test cluster; the documented 127.0.0.1:8081 is swapped for its port.
RMQ5_BLOCK = re.compile(r"^```(\w+) rmq5\n(.*?)^```$", re.M | re.S)
RMQ5_PYTHON = Path(
    os.environ.get("ROCKETQ_RMQ5_PYTHON", README.parent / ".venv-rmq5" / "bin" / "python")
)


@pytest.mark.skipif(not RMQ5_PYTHON.exists(), reason="run `make interop-rmq5`")
async def test_the_rocketmq5_blocks_run_with_the_official_python_client(
    cluster: Cluster, tmp_path: Path
) -> None:
    from rocketq.proxy.config import ProxyConfig
    from rocketq.proxy.server import GrpcServer

    server = GrpcServer.over_namesrv(ProxyConfig(grpc_server_port=0), cluster.addr)
    await server.start("127.0.0.1")
    outputs = []
    try:
        blocks = [(m.group(1), m.group(2)) for m in RMQ5_BLOCK.finditer(README.read_text())]
        assert [kind for kind, _ in blocks] == ["sh", "python"]
        for kind, code in blocks:
            code = code.replace("127.0.0.1:8081", f"127.0.0.1:{server.port}")
            env = dict(os.environ, NAMESRV_ADDR=cluster.addr, HOME=str(tmp_path))
            env.pop("PYTHONPATH", None)  # the client's own packages, not rocketq's src
            env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
            argv = (
                [str(RMQ5_PYTHON), "-c", code]
                if kind == "python"
                else ["bash", "-euo", "pipefail", "-c", code]
            )
            done = await asyncio.to_thread(
                subprocess.run, argv, env=env, capture_output=True, text=True, timeout=60,
                check=False, cwd=str(tmp_path),
            )  # fmt: skip
            assert done.returncode == 0, f"{kind} block failed:\n{code}\n{done.stdout}{done.stderr}"
            outputs.append(done.stdout)
    finally:
        await server.stop()
    text = "\n".join(outputs)
    assert "sent 01" in text  # the 5.x client's message id (V1: version 01)
    assert "received b'hello rocketmq 5' demo" in text
