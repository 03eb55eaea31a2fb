"""``rocketq namesrv``: the command's defaults, and the name server as a real process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from rocketq.namesrv.config import NamesrvConfig
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing.blocking_remoting_client import BlockingRemotingClient
from rocketq.testing.cli_process import CLI_PROGRAM
from rocketq.testing.wire import request

WAIT = 5.0


def test_the_rocketq_namesrv_command_answers_new_topics_by_default() -> None:
    from rocketq.cli.namesrv import namesrv

    option = next(p for p in namesrv.params if p.name == "auto_create_topic_route")
    assert option.default is True
    assert NamesrvConfig().auto_create_topic_route_enable is False  # the library: RocketMQ's


def test_cli_runs_until_sigterm_and_logs_its_port() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CLI_PROGRAM,
            "namesrv",
            "-p",
            "0",
            "--host",
            "127.0.0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on 127.0.0.1:" in line
        port = int(line.rsplit(":", 1)[1])
        with BlockingRemotingClient() as c:
            route = request(RequestCode.GET_ROUTEINFO_BY_TOPIC, topic="X")
            resp = c.invoke(f"127.0.0.1:{port}", route, WAIT)
        assert resp.code == ResponseCode.TOPIC_NOT_EXIST
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT)
        if proc.stdout:
            proc.stdout.close()
