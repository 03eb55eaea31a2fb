"""``rocketq admin`` through click's CliRunner in a worker thread (the servers live on the
test's loop), with the name server of a test cluster; ``error_line`` checks a refusal's one
line (RocketMQ's code name, never a Python class or "None")."""

from __future__ import annotations

import asyncio
import re

from click.testing import CliRunner, Result

from rocketq.cli.admin import admin
from rocketq.testing.cluster import Cluster


async def run(cluster: Cluster | None, *args: str) -> Result:
    ns = ["-n", cluster.addr] if cluster is not None else []
    argv = [*args[:1], *ns, *args[1:]]
    return await asyncio.to_thread(CliRunner().invoke, admin, argv)


def ok(result: Result) -> str:
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


PYTHON_CLASS = re.compile(r"\b[A-Z][A-Za-z]*(Error_?|Exception)\b")


def error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ")
    assert not PYTHON_CLASS.search(lines[0]), lines[0]
    assert "None" not in lines[0]
    return lines[0]
