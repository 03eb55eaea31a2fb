"""Name servers with embedded controllers, each in its own process (``rocketq namesrv -c``
with ``enableControllerInNamesrv=true``, as RocketMQ's NamesrvStartup runs them), so the fault
suite can kill -9 the controller leader. Each is stopped by its PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path

from rocketq.testing.broker_process import free_port

BOOT_MARK = "The Controller boot success"
PROGRAM = "import sys; from rocketq.cli.main import cli; sys.exit(cli())"


class NamesrvProcess:
    """One ``rocketq namesrv`` process with its controller; :meth:`start` again after a kill
    restarts it on the same ports and store."""

    def __init__(self, work_dir: Path, port: int, props: dict[str, str]) -> None:
        self.work_dir = work_dir
        self.port = port
        self.props = props
        self.proc: subprocess.Popen[str] | None = None
        self.output: deque[str] = deque(maxlen=200)
        self._reader: threading.Thread | None = None

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def controller_addr(self) -> str:
        peers = dict(p.split("-", 1) for p in self.props["controllerDLegerPeers"].split(";"))
        return peers[self.props["controllerDLegerSelfId"]]

    def start(self, timeout_s: float = 30.0) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        conf = self.work_dir / "namesrv.conf"
        conf.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        argv = ["namesrv", "--host", "127.0.0.1", "-p", str(self.port), "-c", str(conf)]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PROGRAM, *argv],
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
            raise RuntimeError(f"name server did not boot in {timeout_s} s:\n{tail}")

    def _read(self, booted: threading.Event) -> None:
        proc = self.proc
        assert proc is not None
        assert proc.stdout is not None
        for line in proc.stdout:
            self.output.append(line.rstrip())
            if BOOT_MARK in line:
                booted.set()
        proc.stdout.close()

    def kill(self) -> None:
        """SIGKILL by PID, then reap."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        if self._reader is not None:
            self._reader.join(10)


def nameserver_group(root: Path, size: int = 3) -> list[NamesrvProcess]:
    """``size`` name servers whose embedded controllers form one Raft group."""
    controller_ports = [free_port() for _ in range(size)]
    peers = ";".join(f"n{i}-127.0.0.1:{p}" for i, p in enumerate(controller_ports))
    group = []
    for i in range(size):
        work = root / f"ns{i}"
        props = {
            "enableControllerInNamesrv": "true",
            "controllerDLegerGroup": "group1",
            "controllerDLegerPeers": peers,
            "controllerDLegerSelfId": f"n{i}",
            "controllerStorePath": str(work / "controller"),
            "configStorePath": str(work / "controller.properties"),
            "scanNotActiveBrokerInterval": "200",
            "scanInactiveMasterInterval": "200",
        }
        group.append(NamesrvProcess(work, free_port(), props))
    return group
