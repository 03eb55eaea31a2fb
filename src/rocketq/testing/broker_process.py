"""A broker in its own process, for fault tests that ``kill -9`` it (``rocketq broker -c``).

The harness writes ``broker.conf``, starts the broker, waits for its boot line and keeps
reading its output in a thread (so a chatty broker never blocks on a full pipe). ``kill``
is SIGKILL: no shutdown hook runs, the store is left as a crash leaves it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path

BOOT_MARK = "boot success"


def free_port() -> int:
    """A port nothing listens on now (bound and released; the broker binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def free_port_pair() -> int:
    """A loopback port free together with the port after it (the HA port)."""
    for _ in range(50):
        with socket.socket() as first, socket.socket() as second:
            first.bind(("127.0.0.1", 0))
            port = int(first.getsockname()[1])
            if port + 1 >= 65536:
                continue
            try:
                second.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port
    raise AssertionError("no two consecutive free ports")


class CliProcess:
    """A ``rocketq`` command in its own process: launched with its output read in a thread
    (a chatty process never blocks on a full pipe) until its boot line, stopped by its PID."""

    boot_mark = BOOT_MARK

    def __init__(self, output_lines: int) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.output: deque[str] = deque(maxlen=output_lines)
        self.log_path: Path | None = None  # every line also appended here (kept after a kill)
        self._reader: threading.Thread | None = None

    def _launch(self, argv: list[str], what: str, timeout_s: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from rocketq.cli.main import cli; cli()", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        booted = threading.Event()
        self._reader = threading.Thread(target=self._read, args=(booted,), daemon=True)
        self._reader.start()
        if not booted.wait(timeout_s):
            self.kill()
            tail = "\n".join(list(self.output)[-30:])
            raise RuntimeError(f"{what} did not boot in {timeout_s} s:\n{tail}")

    def _read(self, booted: threading.Event) -> None:
        proc = self.proc
        assert proc is not None
        assert proc.stdout is not None
        with contextlib.ExitStack() as stack:
            log_file = None
            if self.log_path is not None:
                log_file = stack.enter_context(self.log_path.open("a", encoding="utf-8"))
            for line in proc.stdout:
                self.output.append(line.rstrip())
                if log_file is not None:
                    log_file.write(line)
                if self.boot_mark in line:
                    booted.set()
        proc.stdout.close()

    def kill(self) -> int | None:
        """SIGKILL, then reap; the exit status (None if it was not running)."""
        return self._signal(signal.SIGKILL)

    def stop(self) -> int | None:
        """SIGTERM: the broker shuts down cleanly; the exit status (None if not running)."""
        return self._signal(signal.SIGTERM)

    def _signal(self, sig: signal.Signals) -> int | None:
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            os.kill(proc.pid, sig)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        if self._reader is not None:
            self._reader.join(10)
        return proc.returncode

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class BrokerProcess(CliProcess):
    def __init__(self, work_dir: Path, conf: dict[str, str]) -> None:
        super().__init__(output_lines=400)
        self.work_dir = work_dir
        self.conf = conf
        self.log_path = work_dir / "broker.out"

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.conf['listenPort']}"

    def start(self, timeout_s: float = 30.0) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        conf_path = self.work_dir / "broker.conf"
        conf_path.write_text("".join(f"{k}={v}\n" for k, v in self.conf.items()))
        self._launch(["broker", "--host", "127.0.0.1", "-c", str(conf_path)], "broker", timeout_s)
