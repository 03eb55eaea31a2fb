"""``rocketq server --cluster controller``: automatic failover on one machine.

This process runs a name server with an embedded controller (one voter; RocketMQ's
``enableControllerInNamesrv``), and starts a group of three brokers in controller mode, each
**in its own process** (``rocketq broker -c <store>/broker-a-n<i>/broker.conf``), so that
``kill -9 <master pid>`` shows the switch. It prints each broker's PID, and the group's
master, epoch and in-sync replicas at start and on every change (read from the controller).

The brokers use the controller profile (``allAckInSyncStateSet=true``,
``haMaxTimeSlaveNotCatchup=5000``, ``brokerHeartbeatInterval=500``,
``controllerHeartBeatTimeoutMills=3000``; the controller scans every 500 ms). Ports as
RocketMQ's quick start lays them out from the defaults: the controller on the name server's
port + 2, the brokers on the broker port, + 10 and + 20 (each HA port is its listen port + 1).
With broker port 0 each broker binds ports of its own, and the address printed is the one its
boot line names.
On three machines: one ``namesrv.conf`` with ``enableControllerInNamesrv=true`` per machine
(three peers in ``controllerDLegerPeers``) and one of these ``broker.conf`` files on each,
``controllerAddr`` listing the three controllers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
    ReplicaView,
)
from rocketq.cli.controller import new_controller_server
from rocketq.controller.config import ControllerConfig
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.server import NamesrvController

BROKER_NAME = "broker-a"
GROUP_SIZE = 3
PROFILE = {
    "enableControllerMode": "true",
    "allAckInSyncStateSet": "true",
    "haMaxTimeSlaveNotCatchup": "5000",
    "brokerHeartbeatInterval": "500",
    "controllerHeartBeatTimeoutMills": "3000",
    "syncBrokerMetadataPeriod": "2000",
    "registerNameServerPeriod": "5000",
}
WATCH_S = 0.2
#: a child's boot line (rocketq.cli.broker): ``The broker[broker-a, ip:port] boot success.``
BOOT_LINE = re.compile(r"The broker\[[^,\]]*, ([^\]]+)\] boot success")
BOOT_POLL_S = 0.05
BOOT_TIMEOUT_S = 60.0
#: runs ``rocketq broker ...`` in a child process
BROKER_PROGRAM = "import sys; from rocketq.cli.main import cli; sys.exit(cli())"


@dataclass
class BrokerChild:
    name: str
    addr: str
    conf: Path
    proc: subprocess.Popen[bytes]


def _port(wanted: int, host: str) -> int:
    """``wanted``, or a free port for 0 (the embedded controller names its own port in its
    peers list before it listens)."""
    if wanted:
        return wanted
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


async def _booted_addr(child: BrokerChild, timeout_s: float) -> str:
    """The address a child started on port 0 bound, from its boot line in its log (a port
    picked here and bound there later could be taken in between by any other socket)."""
    log_path = child.conf.parent / "broker.log"
    async with asyncio.timeout(timeout_s):
        while True:
            found = BOOT_LINE.search(log_path.read_text(encoding="utf-8", errors="replace"))
            if found:
                return found.group(1)
            if child.proc.poll() is not None:
                raise click.ClickException(
                    f"broker {child.name} exited ({child.proc.returncode}) before it booted; "
                    f"see {log_path}"
                )
            await asyncio.sleep(BOOT_POLL_S)


def _write_conf(path: Path, props: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")


def _start_child(
    root: str, i: int, port: int, host: str, ip: str, ns: str, ctl: str
) -> BrokerChild:
    store = Path(root, f"{BROKER_NAME}-n{i}")
    conf = store / "broker.conf"
    _write_conf(
        conf,
        {
            "brokerClusterName": "DefaultCluster",
            "brokerName": BROKER_NAME,
            "brokerIP1": ip,
            "listenPort": str(port),
            "haListenPort": str(port + 1 if port else 0),
            "namesrvAddr": ns,
            "controllerAddr": ctl,
            "storePathRootDir": str(store),
            **PROFILE,
        },
    )
    with open(store / "broker.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", BROKER_PROGRAM, "broker", "--host", host, "-c", str(conf)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    return BrokerChild(f"n{i}", f"{ip}:{port}", conf, proc)


def describe_view(view: ReplicaView, children: list[BrokerChild]) -> str:
    pids = {c.addr: c.proc.pid for c in children}
    master = pids.get(view.master_address, "?")
    return (
        f"{BROKER_NAME}: epoch {view.master_epoch}, master pid {master} "
        f"({view.master_address}, id {view.master_broker_id}), "
        f"in-sync replicas {sorted(view.sync_state_set)}"
    )


async def run_controller_cluster(
    root: str, namesrv_port: int, broker_port: int, host: str, broker_ip: str
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    namesrv = NamesrvController(
        NamesrvConfig(
            listen_host=host, listen_port=namesrv_port, auto_create_topic_route_enable=True
        )
    )
    await namesrv.start()
    ctl_port = _port(namesrv_port + 2 if namesrv_port else 0, host)
    embedded = new_controller_server(
        ControllerConfig(
            controller_dleger_group="group1",
            controller_dleger_peers=f"n0-{broker_ip}:{ctl_port}",
            controller_dleger_self_id="n0",
            controller_store_path=str(Path(root, "controller")),
            config_store_path=str(Path(root, "controller", "controller.properties")),
            scan_not_active_broker_interval_ms=500,
            scan_inactive_master_interval_ms=500,
        ),
        listen_host=host,
        export_metrics=False,
    )
    children: list[BrokerChild] = []
    client = ControllerClient([embedded.addr])
    try:
        await embedded.start()
        ns_addr = f"{broker_ip}:{namesrv.port}"
        click.echo(f"name server listening on {host}:{namesrv.port}, controller on {embedded.addr}")
        for i in range(GROUP_SIZE):
            port = broker_port + 10 * i if broker_port else 0
            children.append(_start_child(root, i, port, host, broker_ip, ns_addr, embedded.addr))
        for child in children:
            if not broker_port:  # each bound a port of its own: its boot line names it
                child.addr = await _booted_addr(child, BOOT_TIMEOUT_S)
            click.echo(
                f"broker {BROKER_NAME} {child.name} pid {child.proc.pid} on {child.addr}, "
                f"conf {child.conf}, log {child.conf.parent / 'broker.log'}"
            )
        click.echo(f"clients: set the name server address to {ns_addr}")
        await _watch(client, children, stop)
    finally:
        await client.shutdown()
        await asyncio.to_thread(_stop_children, children)
        await embedded.shutdown()
        await namesrv.shutdown()


async def _watch(
    client: ControllerClient, children: list[BrokerChild], stop: asyncio.Event
) -> None:
    """Print the group on every change of master, epoch or in-sync set, and each exit."""
    shown: tuple[object, ...] = ()
    exited: set[str] = set()
    while not stop.is_set():
        with contextlib.suppress(ControllerRequestError, OSError, TimeoutError):
            view = await client.get_replica_info(BROKER_NAME)
            key = (view.master_broker_id, view.master_epoch, view.sync_state_set)
            if view.has_master and key != shown:
                shown = key
                click.echo(describe_view(view, children))
        for child in children:
            code = child.proc.poll()
            if code is not None and child.name not in exited:
                exited.add(child.name)
                click.echo(f"broker {child.name} pid {child.proc.pid} exited ({code})")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), WATCH_S)


def _stop_children(children: list[BrokerChild]) -> None:
    for child in children:
        if child.proc.poll() is None:
            child.proc.send_signal(signal.SIGTERM)
    for child in children:
        try:
            child.proc.wait(60)
        except subprocess.TimeoutExpired:
            child.proc.kill()
            child.proc.wait(10)
