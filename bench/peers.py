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
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

RABBIT_BIN = "/usr/lib/rabbitmq/bin/rabbitmq-server"
START_TIMEOUT_S = 90.0


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


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s}s")


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
def _serving(server: Server) -> Iterator[Server]:
    """``server`` once its port accepts connections; its process group is stopped after."""
    try:
        wait_for_port(server.port, server.proc, START_TIMEOUT_S)
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def rocketq_server(data_dir: str) -> Iterator[Server]:
    """``rocketq server`` (name server + broker, ASYNC_FLUSH) in a child process."""
    ns_port, broker_port = free_port(), free_port()
    rocketq = os.path.join(os.path.dirname(sys.executable), "rocketq")
    args = [
        rocketq, "server", "--store", os.path.join(data_dir, "store"),
        "--namesrv-port", str(ns_port), "--broker-port", str(broker_port),
        "--host", "127.0.0.1",
        "--grpc-port", "0",  # any free port: the default 8081 may be another bench's
    ]  # fmt: skip
    proc = _spawn(args, os.path.join(data_dir, "rocketq.log"))
    with _serving(Server("rocketq", broker_port, proc, ns_port)) as server:
        yield server


@contextlib.contextmanager
def rocketq_sync_flush_broker(data_dir: str) -> Iterator[Server]:
    """``rocketq broker`` with ``flushDiskType=SYNC_FLUSH`` (group commit), no name server."""
    port = free_port()
    conf = os.path.join(data_dir, "broker.conf")
    with open(conf, "w") as f:
        f.write(f"listenPort={port}\nbrokerIP1=127.0.0.1\nflushDiskType=SYNC_FLUSH\n")
    rocketq = os.path.join(os.path.dirname(sys.executable), "rocketq")
    args = [rocketq, "broker", "-c", conf, "--store", os.path.join(data_dir, "store")]
    proc = _spawn(args, os.path.join(data_dir, "rocketq-sync.log"))
    with _serving(Server("rocketq-sync", port, proc)) as server:
        yield server


@contextlib.contextmanager
def rocketq_broker(data_dir: str, conf: dict[str, str], name: str = "rocketq") -> Iterator[Server]:
    """``rocketq broker -c`` with the extra broker.conf keys ``conf``, no name server."""
    port = free_port()
    path = os.path.join(data_dir, "broker.conf")
    lines = {"listenPort": str(port), "brokerIP1": "127.0.0.1", **conf}
    with open(path, "w") as f:
        f.writelines(f"{k}={v}\n" for k, v in lines.items())
    rocketq = os.path.join(os.path.dirname(sys.executable), "rocketq")
    args = [rocketq, "broker", "-c", path, "--store", os.path.join(data_dir, "store")]
    proc = _spawn(args, os.path.join(data_dir, f"{name}.log"))
    with _serving(Server(name, port, proc)) as server:
        yield server


@contextlib.contextmanager
def nats_server(data_dir: str) -> Iterator[Server]:
    """nats-server with JetStream, file storage in a private directory."""
    port = free_port()
    d = os.path.join(data_dir, "nats")
    os.makedirs(d)
    args = ["nats-server", "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", d]
    proc = _spawn(args, os.path.join(data_dir, "nats.log"))
    with _serving(Server("nats", port, proc)) as server:
        yield server


@contextlib.contextmanager
def redis_server(data_dir: str) -> Iterator[Server]:
    """Redis with the append-only file, fsync every second, no RDB snapshots."""
    port = free_port()
    d = os.path.join(data_dir, "redis")
    os.makedirs(d)
    args = [
        "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", d,
        "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
        "--protected-mode", "no",
    ]  # fmt: skip
    proc = _spawn(args, os.path.join(data_dir, "redis.log"))
    with _serving(Server("redis", port, proc)) as server:
        yield server


@contextlib.contextmanager
def rabbitmq_server(data_dir: str) -> Iterator[Server]:
    """RabbitMQ with a private node name, ports, Mnesia dir, config and epmd port."""
    port, dist_port, epmd_port = free_port(), free_port(), free_port()
    d = os.path.join(data_dir, "rabbitmq")
    os.makedirs(os.path.join(d, "mnesia"))
    os.makedirs(os.path.join(d, "log"))
    with open(os.path.join(d, "enabled_plugins"), "w") as f:
        f.write("[].\n")
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
    proc = _spawn([RABBIT_BIN], os.path.join(data_dir, "rabbitmq.log"), env)
    try:
        with _serving(Server("rabbitmq", port, proc)) as server:
            yield server
    finally:
        subprocess.run(["epmd", "-kill"], env=env, capture_output=True, timeout=10, check=False)
