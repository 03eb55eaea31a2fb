"""4.x remoting and 5.x gRPC clients on one topic at once: the official C++ client (PyPI
``rocketmq`` 0.4.4, through the name server and the broker's remoting port) and the official
5.x Python client (through rocketq's gRPC endpoint), each reading what the other sent."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.rmq5_env import Rmq5Env, rmq5_env
from tests.interop.rmq5_runner import json_lines, needs_rmq5, of

CPP_DRIVER = Path(__file__).with_name("cpp_driver.py")
RUN_TIMEOUT_S = 60.0

pytestmark = [
    pytest.mark.interop,
    needs_rmq5,
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        importlib.util.find_spec("rocketmq") is None, reason="rocketmq wheel not installed"
    ),
]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rmq5Env]:
    with rmq5_env(tmp_path_factory.mktemp("mixed")) as running:
        yield running


def drive_cpp(env: Rmq5Env, *args: str) -> list[dict[str, Any]]:
    """One ``cpp_driver.py`` run (the C++ client of .venv, killed at its deadline)."""
    home = env.root / "homes" / f"cpp-{args[0]}"
    home.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(CPP_DRIVER), *args, "--namesrv", env.cluster.namesrv_addr]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
        env={**os.environ, "HOME": str(home)}, cwd=str(home),
    )  # fmt: skip
    events = json_lines(done.stdout)
    assert events, (done.stdout, done.stderr)
    return events


def test_cpp_and_python5_clients_read_each_others_messages(env: Rmq5Env) -> None:
    topic, group = env.topic("MixedTopic"), env.group("mixed-five")
    five = env.drive("send_only", "--topic", topic, "--count", "3")
    assert [e["body"] for e in of(five, "sent")] == ["five-0", "five-1", "five-2"], five
    cpp = drive_cpp(env, "produce", "--topic", topic, "--count", "3", "--tags", "FromCpp")
    assert len([e for e in cpp if e["event"] == "sent"]) == 3, cpp
    # the C++ pull stops at the first queue end it sees: every answered send dispatched first
    assert env.broker.message_store.wait_for_dispatch(10.0)

    pulled = drive_cpp(env, "pull", "--topic", topic, "--group", "mixed-cpp")
    by_body = {e["body"]: e for e in pulled if e["event"] == "msg"}
    assert set(by_body) == {"five-0", "five-1", "five-2", "body-0", "body-1", "body-2"}
    assert by_body["five-1"]["tags"] == "FromFive"  # the 5.x tag reads as 4.x TAGS

    got = env.drive("receive_only", "--topic", topic, "--group", group, "--count", "6")
    received = {e["body"]: e for e in of(got, "received")}
    assert set(received) == set(by_body)
    assert received["body-2"]["tag"] == "FromCpp"  # 4.x TAGS read as the 5.x tag
    assert not any(e["corrupted"] for e in received.values())
