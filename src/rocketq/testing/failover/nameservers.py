"""Name servers with embedded controllers, each in its own process (``rocketq namesrv -c``
with ``enableControllerInNamesrv=true``, as RocketMQ's NamesrvStartup runs them), so the fault
suite can kill -9 the controller leader. Each is stopped by its PID.

A name server starts on port 0 and the harness reads its port from the boot line; the
controller's port is picked (every peer, through its proxy, must know it first), so a start
whose port was taken meanwhile is retried a bounded while (as a restart on the same ports)."""

from __future__ import annotations

import re
from pathlib import Path

from rocketq.testing.broker_process import START_ATTEMPTS, CliProcess, free_port
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

    def start(self, timeout_s: float = 30.0) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        conf = self.work_dir / "namesrv.conf"
        conf.write_text("".join(f"{k}={v}\n" for k, v in self.props.items()))
        argv = ["namesrv", "--host", "127.0.0.1", "-p", str(self.port), "-c", str(conf)]
        self._launch_retrying(argv, "name server", timeout_s, START_ATTEMPTS)
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
    root: Path, size: int = 3, scan_ms: int = 200
) -> tuple[list[NamesrvProcess], ControllerLinks]:
    """``size`` name servers whose embedded controllers form one Raft group, each reaching the
    others through the proxies of the returned :class:`ControllerLinks` (which also makes the
    brokers' links); ``scan_ms`` is ``scanNotActiveBrokerInterval``."""
    controllers = {f"n{i}": f"127.0.0.1:{free_port()}" for i in range(size)}
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
