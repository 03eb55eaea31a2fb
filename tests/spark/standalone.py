"""A Spark standalone cluster on loopback for tests: one master and one worker, both real.

Both run in the foreground through the installed PySpark's own ``bin/spark-class`` (its
``SPARK_HOME`` is the ``pyspark`` package directory), each in its own process group so that
stopping one by its PID also stops what it started (the worker's executors and their Python
workers). Ports are chosen by the JVMs (port 0) and read from their logs, so parallel runs
never collide; the master's REST server, which would bind the fixed port 6066, is off.
Logs, the worker's directory and Spark's local directories live under the given root.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0
MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
WORKER_READY = "Successfully registered with master"


def spark_home_env(root: Path) -> dict[str, str]:
    """The environment of every process of the cluster (and of spark-submit)."""
    local = root / "local"
    local.mkdir(parents=True, exist_ok=True)
    return {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOCAL_DIRS": str(local),
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
    }


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(SPARK_HOME / "bin" / "spark-class"), *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: executors and Python workers die with it
        )


def _wait_for(process: subprocess.Popen[bytes], log: Path, pattern: re.Pattern[str]) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        found = pattern.search(log.read_text(errors="replace"))
        if found:
            return found.group(0)
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{log.name} never said {pattern.pattern!r}:\n" + tail(log))
        time.sleep(0.1)


def tail(log: Path, chars: int = 4000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else "(no log)"


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group started with ``process``, SIGKILL it if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(STOP_TIMEOUT_S)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):  # leftovers of the group (executors)
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def standalone_cluster(root: Path, *, cores: int = 1, memory: str = "1g") -> Iterator[str]:
    """Start a master and one worker; yields the master URL; stops both, even on failure."""
    env = spark_home_env(root)
    started: list[subprocess.Popen[bytes]] = []
    try:
        master_log = root / "master.log"
        master_args = ["--host", "127.0.0.1", "--port", "0", "--webui-port", "0"]
        master = _start(["org.apache.spark.deploy.master.Master", *master_args], env, master_log)
        started.append(master)
        url = MASTER_URL.search(_wait_for(master, master_log, MASTER_URL))
        assert url is not None
        master_url = url.group(1)
        worker_log = root / "worker.log"
        worker_args = [
            *("--host", "127.0.0.1", "--port", "0", "--webui-port", "0"),
            *("--cores", str(cores), "--memory", memory, "--work-dir", str(root / "work")),
        ]
        worker = _start(
            ["org.apache.spark.deploy.worker.Worker", master_url, *worker_args], env, worker_log
        )
        started.append(worker)
        _wait_for(worker, worker_log, re.compile(re.escape(WORKER_READY)))
        yield master_url
    finally:
        for process in reversed(started):
            stop(process)
