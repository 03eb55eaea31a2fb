"""Name servers with embedded controllers, each in its own process (``rocketq namesrv -c``
with ``enableControllerInNamesrv=true``, as RocketMQ's NamesrvStartup runs them), so the fault
suite can kill -9 the controller leader. Each is stopped by its PID.

A name server starts on port 0 and the harness reads its port from the boot line. The
controller's port is picked (a controller names itself in ``controllerDLegerPeers`` and answers
that address as the leader's, so it cannot start on port 0): a port taken between the pick and
the first start is replaced by a fresh one, and the proxies in front of the controller follow
it (:func:`start_nameserver_group`; nothing but the proxies and the controller's own conf knows
its real address before it has started). A restart re-binds the same ports, retried a bounded
while if something holds one meanwhile."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

from rocketq.testing.broker_process import START_ATTEMPTS, CliProcess, PortTakenError, free_port
from rocketq.testing.failover.partition import ControllerLinks

#: printed last, once the name server and its controller both listen (rocketq.cli.namesrv)
BOOT_MARK = "The Name Server boot success"
BOOT_LINE = re.compile(r"The Name Server boot success\. listening on [^:]*:(\d+)")
METRICS_URL = re.compile(r"metrics: http://[^:]+:(\d+)/")


class NamesrvProcess(CliProcess):
    """One ``rocketq namesrv`` process with its controller; :meth:`start` again after a kill
    restarts it on the same ports and store (``port`` 0: any free one, learned at the first
    start)."""

    boot_mark = BOOT_MARK

    def __init__(self, work_dir: Path, port: int, props: dict[str, str]) -> None:
        super().__init__(output_lines=200)
        self.work_dir = work_dir
        self.port = port
        self.props = props

    @property
    def addr(self) -> str:
        if not self.port:
            raise RuntimeError("the name server's port is known once it has started")
        return f"127.0.0.1:{self.port}"

    @property
    def peer_id(self) -> str:
        return self.props["controllerDLegerSelfId"]

    @property
    def controller_addr(self) -> str:
        peers = dict(p.split("-", 1) for p in self.props["controllerDLegerPeers"].split(";"))
        return peers[self.props["controllerDLegerSelfId"]]

    def start(self, timeout_s: float = 30.0, *, attempts: int = START_ATTEMPTS) -> None:
        """Start (again after a kill: on the same ports); while a port it binds is taken,
        again after a pause (``attempts`` in all), then PortTakenError."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        conf = self.work_dir / "namesrv.conf"
        conf.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        argv = ["namesrv", "--host", "127.0.0.1", "-p", str(self.port), "-c", str(conf)]
        self._launch_retrying(argv, "name server", timeout_s, attempts)
        found = BOOT_LINE.search(self.boot_line)
        if found is None:
            self.kill()
            raise RuntimeError(f"name server boot line without its port: {self.boot_line!r}")
        self.port = int(found.group(1))
        metrics = METRICS_URL.search(self.boot_line)
        if metrics is not None and self.props.get("metricsPromExporterPort") == "0":
            self.props["metricsPromExporterPort"] = metrics.group(1)  # a restart re-binds it

    @property
    def metrics_port(self) -> int:
        """Where ``/metrics`` is served (known once started if configured as 0)."""
        port = int(self.props.get("metricsPromExporterPort", "0"))
        if not port:
            raise RuntimeError("the name server's metrics port is known once it has started")
        return port


def nameserver_group(
    root: Path, size: int = 3, scan_ms: int = 200, pick_port: Callable[[], int] = free_port
) -> tuple[list[NamesrvProcess], ControllerLinks]:
    """``size`` name servers whose embedded controllers form one Raft group, each reaching the
    others through the proxies of the returned :class:`ControllerLinks` (which also makes the
    brokers' links); ``scan_ms`` is ``scanNotActiveBrokerInterval``; ``pick_port`` picks
    each controller's port (start them with :func:`start_nameserver_group`)."""
    controllers = {f"n{i}": f"127.0.0.1:{pick_port()}" for i in range(size)}
    links = ControllerLinks(controllers)
    group = []
    for i in range(size):
        work = root / f"ns{i}"
        props = {
            "enableControllerInNamesrv": "true",
            "controllerDLegerGroup": "group1",
            "controllerDLegerPeers": links.peers_of(f"n{i}"),
            "controllerDLegerSelfId": f"n{i}",
            "controllerStorePath": str(work / "controller"),
            "configStorePath": str(work / "controller.properties"),
            "scanNotActiveBrokerInterval": str(scan_ms),
            "scanInactiveMasterInterval": str(scan_ms),
        }
        group.append(NamesrvProcess(work, 0, props))
    return group, links


def start_on_fresh_port(
    nameserver: NamesrvProcess, links: ControllerLinks, pick_port: Callable[[], int] = free_port
) -> None:
    """The first start of ``nameserver``: while its controller's picked port is taken (by any
    socket, between the pick and the bind), move the controller to a fresh port, its proxies
    with it (:meth:`ControllerLinks.move_controller`), and start again (START_ATTEMPTS in
    all), then PortTakenError. Its name server binds port 0 (and any metrics port 0): only the
    controller's port can be taken."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            nameserver.start(attempts=1)
        except PortTakenError as exc:
            if attempt == START_ATTEMPTS:
                raise PortTakenError(f"{exc} (on {START_ATTEMPTS} fresh ports)") from None
            links.move_controller(nameserver.peer_id, f"127.0.0.1:{pick_port()}")
            nameserver.props["controllerDLegerPeers"] = links.peers_of(nameserver.peer_id)
        else:
            return


async def start_nameserver_group(
    nameservers: list[NamesrvProcess],
    links: ControllerLinks,
    pick_port: Callable[[], int] = free_port,
) -> None:
    """The first start of every name server of :func:`nameserver_group`, at once, each on a
    fresh controller port if its picked one was taken (:func:`start_on_fresh_port`)."""
    await asyncio.gather(
        *(asyncio.to_thread(start_on_fresh_port, n, links, pick_port) for n in nameservers)
    )
