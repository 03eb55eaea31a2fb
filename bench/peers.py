"""Servers for bench/broker_bench.py, each a child process on 127.0.0.1 with a private data dir.

``ensure_installed`` installs what a fresh machine lacks: ``redis-server``,
``rabbitmq-server`` and ``nats-server`` from Debian's packages (apt-get) and the Python
clients ``redis``, ``aio-pika`` and ``nats-py`` from PyPI. Every server is started in its own
session and stopped by killing that process group by PID, so nothing outlives the bench.
``Server.cpu_s`` and ``Server.rss_anon_mb`` read the server's whole process group from
``/proc`` (RabbitMQ's beam runs as a child of its start script).

Durability, as each system's users run it: rocketq ASYNC_FLUSH (RocketMQ's default) and a
SYNC_FLUSH broker for the group-commit row; Redis AOF with ``appendfsync everysec``; NATS
JetStream file storage with the server's default sync; RabbitMQ durable queues, persistent
messages and publisher confirms.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

RABBIT_BIN = "/usr/lib/rabbitmq/bin/rabbitmq-server"
START_TIMEOUT_S = 90.0
#: starts on fresh ports when the port free_port picked was taken before the server bound it
BIND_ATTEMPTS = 5
ADDR_IN_USE = re.compile(rb"address already in use|eaddrinuse|port \d+ is in use", re.IGNORECASE)
#: the port a server started on port 0 (or NATS's -1) says it listens on
LISTEN_LINE = re.compile(rb"Listening for client connections on [^\s:]+:(\d+)")


def ensure_installed(systems: list[str]) -> None:
    debs = []
    if "redis" in systems and shutil.which("redis-server") is None:
        debs.append("redis-server")
    if "nats" in systems and shutil.which("nats-server") is None:
        debs.append("nats-server")
    if "rabbitmq" in systems and not os.path.exists(RABBIT_BIN):
        debs.append("rabbitmq-server")
    if debs:
        print(f"installing {' '.join(debs)} with apt-get", flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-q"], check=False, env=env, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-q", *debs], check=True, env=env, timeout=900)
    wheels = [
        pkg
        for system, pkg, module in (
            ("redis", "redis", "redis"),
            ("rabbitmq", "aio-pika", "aio_pika"),
            ("nats", "nats-py", "nats"),
        )
        if system in systems and importlib.util.find_spec(module) is None
    ]
    if wheels:
        print(f"installing {' '.join(wheels)} with pip", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *wheels], check=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on ``port`` (any address), from /proc/net/tcp{,6}."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            next(f)  # the header
            for line in f:
                fields = line.split()
                # local_address is ADDR:PORT in hex; st 0A is TCP_LISTEN
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                    inodes.add(f"socket:[{fields[9]}]")
    return inodes


def _group_listens(pgid: int, port: int) -> bool:
    """True when a process of the group ``pgid`` holds a socket listening on ``port``: ours, not
    one that another process bound after :func:`free_port` released the port."""
    inodes = _listening_inodes(port)
    if not inodes:
        return False
    for pid in _group_pids(pgid):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                        return True
    return False


def _last_line(log: str) -> str:
    with contextlib.suppress(OSError), open(log, "rb") as f:
        lines = f.read()[-4096:].decode(errors="replace").strip().splitlines()
        return lines[-1].strip() if lines else "(empty log)"
    return "(no log)"


class PortTaken(RuntimeError):
    """The server could not bind its port: another process took it after free_port released
    it (or holds it), so a start on a fresh port may succeed."""


def wait_for_port(server: Server, timeout_s: float, log: str) -> None:
    """Return once the server's own process group listens on its port (``server.port`` 0: the
    port its log names, :data:`LISTEN_LINE`); raise :class:`PortTaken` when it exits on a bind
    failure, RuntimeError when it exits otherwise, TimeoutError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.port == 0:
            with contextlib.suppress(OSError), open(log, "rb") as f:
                found = LISTEN_LINE.search(f.read())
                if found:
                    server.port = int(found.group(1))
        if server.proc.poll() is not None:
            with contextlib.suppress(OSError), open(log, "rb") as f:
                if ADDR_IN_USE.search(f.read()):
                    raise PortTaken(f"{server.name}: port {server.port} taken ({_last_line(log)})")
            raise RuntimeError(
                f"{server.name} exited with {server.proc.returncode} before listening on "
                f"{server.port or 'its port'}: {_last_line(log)} (log: {log})"
            )
        if server.port and _group_listens(server.proc.pid, server.port):
            return
        time.sleep(0.05)
    raise TimeoutError(
        f"{server.name} does not listen on 127.0.0.1:{server.port} after {timeout_s}s: "
        f"{_last_line(log)} (log: {log})"
    )


def _group_pids(pgid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid:  # field 5 of stat: pgrp
                    pids.append(int(entry))
    return pids


@dataclass
class Server:
    name: str
    port: int
    proc: subprocess.Popen[bytes]
    namesrv_port: int = 0

    def cpu_s(self) -> float:
        """User + system CPU seconds of every process in the server's group."""
        ticks = 0
        for pid in _group_pids(self.proc.pid):
            with contextlib.suppress(OSError, IndexError, ValueError):
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def rss_anon_mb(self) -> float:
        """RssAnon of the server's process group, in MB."""
        kib = 0
        for pid in _group_pids(self.proc.pid):
            with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        kib += int(line.split()[1])
        return kib / 1024

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        # children of the group that outlived the leader (beam, epmd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)


def _spawn(args: list[str], log: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


@contextlib.contextmanager
def _serving(start: Callable[[], Server], log: str) -> Iterator[Server]:
    """The server ``start`` spawns (on ports it picks afresh at each call), once its own process
    group listens on its port; its process group is stopped after. A start whose port another
    process took in the meantime (the server exits on the bind, or never owns the port) is
    stopped and made again on fresh ports, up to :data:`BIND_ATTEMPTS` times."""
    taken: list[str] = []
    for _ in range(BIND_ATTEMPTS):
        server = start()
        try:
            wait_for_port(server, START_TIMEOUT_S, log)
        except PortTaken as e:
            server.stop()
            taken.append(str(e))
            continue
        except BaseException:
            server.stop()
            raise
        try:
            yield server
        finally:
            server.stop()
        return
    raise RuntimeError(
        f"{server.name} could not bind a port in {BIND_ATTEMPTS} starts, each taken by another "
        f"process after it was picked (last: {taken[-1]}; log: {log})"
    )


@contextlib.contextmanager
def rocketq_server(data_dir: str) -> Iterator[Server]:
    """``rocketq server`` (name server + broker, ASYNC_FLUSH) in a child process."""
    rocketq = os.path.join(os.path.dirname(sys.executable), "rocketq")
    log = os.path.join(data_dir, "rocketq.log")

    def start() -> Server:
        ns_port, broker_port = free_port(), free_port()
        args = [
            rocketq, "server", "--store", os.path.join(data_dir, "store"),
            "--namesrv-port", str(ns_port), "--broker-port", str(broker_port),
            "--host", "127.0.0.1",
            "--grpc-port", "0",  # any free port: the default 8081 may be another bench's
        ]  # fmt: skip
        return Server("rocketq", broker_port, _spawn(args, log), ns_port)

    with _serving(start, log) as server:
        yield server


@contextlib.contextmanager
def rocketq_sync_flush_broker(data_dir: str) -> Iterator[Server]:
    """``rocketq broker`` with ``flushDiskType=SYNC_FLUSH`` (group commit), no name server."""
    with rocketq_broker(data_dir, {"flushDiskType": "SYNC_FLUSH"}, "rocketq-sync") as server:
        yield server


@contextlib.contextmanager
def rocketq_broker(data_dir: str, conf: dict[str, str], name: str = "rocketq") -> Iterator[Server]:
    """``rocketq broker -c`` with the extra broker.conf keys ``conf``, no name server."""
    path = os.path.join(data_dir, "broker.conf")
    rocketq = os.path.join(os.path.dirname(sys.executable), "rocketq")
    log = os.path.join(data_dir, f"{name}.log")

    def start() -> Server:
        port = free_port()
        lines = {"listenPort": str(port), "brokerIP1": "127.0.0.1", **conf}
        with open(path, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in lines.items())
        args = [rocketq, "broker", "-c", path, "--store", os.path.join(data_dir, "store")]
        return Server(name, port, _spawn(args, log))

    with _serving(start, log) as server:
        yield server


@contextlib.contextmanager
def nats_server(data_dir: str) -> Iterator[Server]:
    """nats-server with JetStream, file storage in a private directory; it picks its own port
    (``-p -1``) and names it in its log, so no other process can take it first."""
    d = os.path.join(data_dir, "nats")
    os.makedirs(d)
    log = os.path.join(data_dir, "nats.log")
    args = ["nats-server", "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", d]
    with _serving(lambda: Server("nats", 0, _spawn(args, log)), log) as server:
        yield server


@contextlib.contextmanager
def redis_server(data_dir: str) -> Iterator[Server]:
    """Redis with the append-only file, fsync every second, no RDB snapshots. Redis cannot pick
    its own port (``--port 0`` turns TCP off), so a port taken before it binds means a retry."""
    d = os.path.join(data_dir, "redis")
    os.makedirs(d)
    log = os.path.join(data_dir, "redis.log")

    def start() -> Server:
        port = free_port()
        args = [
            "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", d,
            "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
            "--protected-mode", "no",
        ]  # fmt: skip
        return Server("redis", port, _spawn(args, log))

    with _serving(start, log) as server:
        yield server


@contextlib.contextmanager
def rabbitmq_server(data_dir: str) -> Iterator[Server]:
    """RabbitMQ with a private node name, ports, Mnesia dir, config and epmd port."""
    d = os.path.join(data_dir, "rabbitmq")
    os.makedirs(os.path.join(d, "mnesia"))
    os.makedirs(os.path.join(d, "log"))
    with open(os.path.join(d, "enabled_plugins"), "w") as f:
        f.write("[].\n")
    log = os.path.join(data_dir, "rabbitmq.log")
    envs: list[dict[str, str]] = []

    def start() -> Server:
        port, dist_port, epmd_port = free_port(), free_port(), free_port()
        with open(os.path.join(d, "rabbitmq.conf"), "w") as f:
            f.write(f"listeners.tcp.default = 127.0.0.1:{port}\nloopback_users = none\n")
        env = dict(
            os.environ,
            HOME=d,
            RABBITMQ_NODENAME=f"bench{port}@localhost",
            RABBITMQ_NODE_PORT=str(port),
            RABBITMQ_DIST_PORT=str(dist_port),
            RABBITMQ_MNESIA_BASE=os.path.join(d, "mnesia"),
            RABBITMQ_LOG_BASE=os.path.join(d, "log"),
            RABBITMQ_CONFIG_FILE=os.path.join(d, "rabbitmq.conf"),
            RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(d, "enabled_plugins"),
            RABBITMQ_PID_FILE=os.path.join(d, "pid"),
            ERL_EPMD_PORT=str(epmd_port),
        )
        envs.append(env)
        return Server("rabbitmq", port, _spawn([RABBIT_BIN], log, env))

    try:
        with _serving(start, log) as server:
            yield server
    finally:
        for env in envs:  # each start's epmd
            subprocess.run(["epmd", "-kill"], env=env, capture_output=True, timeout=10, check=False)
