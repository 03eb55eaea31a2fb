"""The official RocketMQ 5 Node.js client (rocketmq-client-nodejs 1.0.8, npm, installed by
``make test`` into tests/interop/node5) against rocketq's gRPC endpoint: producer and
SimpleConsumer, and FIFO per message group (``node5/node5_driver.js``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.rmq5_env import Rmq5Env, rmq5_env
from tests.interop.rmq5_runner import json_lines, of

NODE5 = Path(__file__).with_name("node5")
PACKAGE = NODE5 / "node_modules" / "rocketmq-client-nodejs" / "package.json"
VERSION = "1.0.8"
RUN_TIMEOUT_S = 60.0


def node5_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed (make test installs it)"
    if not PACKAGE.exists():
        return "rocketmq-client-nodejs is missing: run `make interop-rmq5`"
    version = json.loads(PACKAGE.read_text())["version"]
    return None if version == VERSION else f"rocketmq-client-nodejs {version}, not {VERSION}"


pytestmark = [
    pytest.mark.interop,
    pytest.mark.timeout(120),
    pytest.mark.skipif(node5_missing() is not None, reason=str(node5_missing())),
]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rmq5Env]:
    with rmq5_env(tmp_path_factory.mktemp("node5")) as running:
        yield running


def drive_node(env: Rmq5Env, scenario: str, topic: str, group: str) -> list[dict[str, Any]]:
    """Run one scenario under node (killed at its deadline by subprocess.run); its events."""
    home = env.root / "homes" / f"node-{scenario}"
    home.mkdir(parents=True, exist_ok=True)
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, str(NODE5 / "node5_driver.js"), scenario, env.endpoint, topic, group],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S, cwd=str(home), check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
    )  # fmt: skip
    events = json_lines(done.stdout)
    assert events, (done.stdout, done.stderr)
    assert events[-1]["event"] == "end", (done.stdout, done.stderr)
    assert not of(events, "error"), events
    return events


def test_node_producer_and_simple_consumer(env: Rmq5Env) -> None:
    topic, group = env.topic("Node5Topic"), env.group("node5-simple")
    events = drive_node(env, "roundtrip", topic, group)
    sent = {e["body"]: e["message_id"] for e in of(events, "sent")}
    got = {e["body"]: e for e in of(events, "received")}
    assert set(got) == set(sent) == {"node-0", "node-1", "node-2"}
    for body, msg in got.items():
        i = body.split("-")[1]
        assert msg["message_id"] == sent[body]
        assert msg["tag"] == "FromNode"
        assert msg["keys"] == [f"node-key-{i}"]
        assert msg["properties"]["n"] == i
        assert msg["delivery_attempt"] == 1
        assert msg["corrupted"] is False  # Node checks the MD5 digest too


def test_node_fifo_order_per_message_group(env: Rmq5Env) -> None:
    topic = env.topic("Node5Fifo", "FIFO", queues=2)
    group = env.group("node5-fifo", "-o", "true")
    events = drive_node(env, "fifo", topic, group)
    got = [str(e["body"]) for e in of(events, "received")]
    for name in ("g1", "g2"):
        assert [b for b in got if b.startswith(name)] == [f"{name}-{i}" for i in range(3)]
    first, held = of(events, "received")[0], of(events, "while_in_flight")[0]
    mine = str(first["body"]).split("-")[0]
    assert not [b for b in held["bodies"] if b.startswith(mine)], (first, held)
