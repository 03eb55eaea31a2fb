"""A broker in its own process, for fault tests that ``kill -9`` it (``rocketq broker -c``).

The harness writes ``broker.conf``, starts the broker, waits for its boot line and keeps
reading its output in a thread (so a chatty broker never blocks on a full pipe). ``kill``
is SIGKILL: no shutdown hook runs, the store is left as a crash leaves it.

Ports: a port picked free and released before the broker binds it can be taken in between
(by another test's server, or by any outgoing connection: ephemeral ports come from the same
range). So a broker starts on port 0 (``listenPort`` left out) and the harness reads the ports
it bound from its boot line; a restart re-binds them (the store stamps the address into its
records), retrying a bounded while if something holds one meanwhile. A broker whose ports
must be known before it starts is started by :func:`start_on_picked_ports`, which picks
fresh ones when one was taken.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

BOOT_MARK = "boot success"
#: ``rocketq broker``'s boot line: its address and the HA port it bound (rocketq.cli.broker)
BROKER_BOOT_LINE = re.compile(r"The broker\[[^,\]]*, ([^\]]+):(\d+)\] boot success\. HA port (\d+)")
#: how a server command says it could not bind (rocketq.cli.startup.port_line, or the OS)
PORT_TAKEN_LINE = re.compile(r"port \d+ is in use|cannot listen|[Aa]ddress already in use")
#: a start whose port was taken is tried this many times in all, RETRY_PAUSE_S apart
START_ATTEMPTS = 8
#: the wait for a broker's boot line: an event awaited, so only a broker that never boots
#: waits it out (a loaded 2-core machine booted some in over 30 s)
BOOT_TIMEOUT_S = 60.0
RETRY_PAUSE_S = 0.5


class PortTakenError(RuntimeError):
    """A server process exited before booting because a port it must bind was taken."""


def free_port() -> int:
    """A port nothing listens on now (bound and released). Another socket can take it before
    a server binds it: a helper that starts a server on it must retry on PortTakenError."""
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
        self.boot_line = ""
        self.port_taken_line = ""  # the line that says a port was taken, before the boot line

    def _launch(self, argv: list[str], what: str, timeout_s: float) -> None:
        """Start; return at the boot line. PortTakenError if the process ends saying a port
        is taken, RuntimeError with its last lines if it ends or is silent otherwise."""
        self.boot_line = self.port_taken_line = ""
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from rocketq.cli.main import cli; cli()", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        booted = threading.Event()  # set by the boot line, or by the end of the output
        self._reader = threading.Thread(target=self._read, args=(booted,), daemon=True)
        self._reader.start()
        if booted.wait(timeout_s) and self.boot_line:
            return
        self.kill()
        tail = "\n".join(list(self.output)[-30:])
        if self.port_taken_line:
            raise PortTakenError(f"{what} could not bind: {self.port_taken_line}")
        why = "it ended" if self.proc is None or self.output else "it was silent"
        raise RuntimeError(f"{what} did not boot in {timeout_s} s ({why}):\n{tail}")

    def _launch_retrying(self, argv: list[str], what: str, timeout_s: float, attempts: int) -> None:
        """``_launch``, again after a pause while a port it binds is taken (``attempts`` in
        all); then PortTakenError with one line."""
        for attempt in range(1, attempts + 1):
            try:
                self._launch(argv, what, timeout_s)
            except PortTakenError as exc:
                if attempt == attempts:
                    raise PortTakenError(f"{exc} ({attempts} attempts)") from None
                time.sleep(RETRY_PAUSE_S)
            else:
                return

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
                if self.boot_mark in line and not self.boot_line:
                    self.boot_line = line.rstrip()
                    booted.set()
                elif not self.boot_line and PORT_TAKEN_LINE.search(line):
                    self.port_taken_line = line.strip()
        proc.stdout.close()
        booted.set()  # the process ended: stop waiting for a boot line

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
    """``rocketq broker -c``. Leave ``listenPort`` out (or 0): the first start binds any free
    port (and, with ``haListenPort`` out or 0, any free HA port), learns both from the boot
    line and writes them into ``conf``, so every restart comes back on the same address."""

    def __init__(self, work_dir: Path, conf: dict[str, str]) -> None:
        super().__init__(output_lines=400)
        self.work_dir = work_dir
        self.conf = {"listenPort": "0", **conf}
        self.log_path = work_dir / "broker.out"
        self.ha_port = 0  # learned from the boot line

    @property
    def port(self) -> int:
        port = int(self.conf["listenPort"])
        if not port:
            raise RuntimeError("the broker's port is known once it has started")
        return port

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ha_addr(self) -> str:
        """Where a slave connects (haMasterAddress)."""
        if not self.ha_port:
            raise RuntimeError("the broker's HA port is known once it has started")
        return f"127.0.0.1:{self.ha_port}"

    def start(self, timeout_s: float = BOOT_TIMEOUT_S, *, attempts: int | None = None) -> None:
        """Start, the boot line awaited up to ``timeout_s``; a restart re-binds the ports of
        the first start, trying ``attempts`` (START_ATTEMPTS) times while they are taken, then
        PortTakenError."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        conf_path = self.work_dir / "broker.conf"
        conf_path.write_text("".join(f"{k}={v}\n" for k, v in self.conf.items()))
        argv = ["broker", "--host", "127.0.0.1", "-c", str(conf_path)]
        self._launch_retrying(argv, "broker", timeout_s, attempts or START_ATTEMPTS)
        found = BROKER_BOOT_LINE.search(self.boot_line)
        if found is None:
            self.kill()
            raise RuntimeError(f"broker boot line without its ports: {self.boot_line!r}")
        any_ha_port = "0" if self.conf["listenPort"] == "0" else None  # else listenPort + 1
        if self.conf.get("haListenPort", any_ha_port) == "0":
            self.conf["haListenPort"] = found.group(3)  # a restart re-binds it too
        self.conf["listenPort"] = found.group(2)
        self.ha_port = int(found.group(3))


def start_on_picked_ports(
    make: Callable[[], BrokerProcess], timeout_s: float = BOOT_TIMEOUT_S
) -> BrokerProcess:
    """``make()`` a broker whose ports must be known before it starts (a stock broker.conf:
    the HA port is listenPort + 1) and start it; while a picked port is taken, make one on
    fresh ports and start that (START_ATTEMPTS in all), then PortTakenError."""
    for attempt in range(1, START_ATTEMPTS + 1):
        broker = make()
        try:
            broker.start(timeout_s, attempts=1)
        except PortTakenError as exc:
            if attempt == START_ATTEMPTS:
                raise PortTakenError(f"{exc} (on {START_ATTEMPTS} sets of fresh ports)") from None
        else:
            return broker
    raise AssertionError("unreachable")
