"""Run scripts in the 5.x Python client's own venv, in a subprocess with a deadline.

``rocketmq-python-client`` 5.1.2 and the C++ client ``rocketmq`` 0.4.4 (in ``.venv``) both own
the top-level package ``rocketmq``, so the 5.x client lives in ``.venv-rmq5`` (``make
interop-rmq5``, a prerequisite of ``make test``; ``ROCKETQ_RMQ5_PYTHON`` names another
interpreter). Scripts run there never import rocketq. Each run gets its own HOME: the client
writes its log under ``~/logs/rocketmq_python`` when imported.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
INTEROP = Path(__file__).resolve().parent
RMQ5_PYTHON = Path(os.environ.get("ROCKETQ_RMQ5_PYTHON", REPO / ".venv-rmq5" / "bin" / "python"))

needs_rmq5 = pytest.mark.skipif(
    not RMQ5_PYTHON.exists(), reason=f"{RMQ5_PYTHON} missing: run `make interop-rmq5`"
)


class Rmq5RunError(AssertionError):
    """A script in the client's venv failed or overran its deadline; carries its output."""


async def run_rmq5(
    script: str,
    *args: str,
    home: Path,
    timeout_s: float,
    env: dict[str, str] | None = None,
) -> str:
    """Run ``tests/interop/<script>`` with the client's interpreter; its stdout. The process is
    killed by PID at the deadline."""
    home.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 -- one mkdir before the run
    full_env = {**os.environ, "HOME": str(home), "PYTHONUNBUFFERED": "1", **(env or {})}
    full_env.pop("PYTHONPATH", None)  # rocketq's src must not shadow the client's packages
    proc = await asyncio.create_subprocess_exec(
        str(RMQ5_PYTHON),
        str(INTEROP / script),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=full_env,
        cwd=str(home),
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        out, err = await proc.communicate()
        raise Rmq5RunError(
            f"{script} {' '.join(args)} overran {timeout_s} s\n{out.decode()}\n{err.decode()}"
        ) from None
    if proc.returncode != 0:
        raise Rmq5RunError(
            f"{script} {' '.join(args)} exited {proc.returncode}\n{out.decode()}\n{err.decode()}"
        )
    return out.decode()


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def drive_rmq5(
    endpoint: str, scenario: str, *args: str, home: Path, timeout_s: float = 60.0,
    env: dict[str, str] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Run one ``rmq5_driver.py`` scenario (blocking: the servers run on another thread's
    loop); its events. A scenario that overruns ``timeout_s`` is killed and fails the test."""
    home.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, "HOME": str(home), "PYTHONUNBUFFERED": "1", **(env or {})}
    full_env.pop("PYTHONPATH", None)
    argv = [str(RMQ5_PYTHON), str(INTEROP / "rmq5_driver.py"), scenario, "--endpoint", endpoint]
    try:
        done = subprocess.run(
            [*argv, *args], capture_output=True, text=True, timeout=timeout_s, env=full_env,
            cwd=str(home), check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:  # subprocess.run killed it
        raise Rmq5RunError(f"{scenario} overran {timeout_s} s\n{exc.stdout}\n{exc.stderr}") from exc
    events = json_lines(done.stdout)
    if done.returncode != 0 or not events or events[-1]["event"] != "end":
        raise Rmq5RunError(f"{scenario} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    return events


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]
