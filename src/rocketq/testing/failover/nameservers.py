"""Name servers with embedded controllers, each in its own process (``rocketq namesrv -c``
with ``enableControllerInNamesrv=true``, as RocketMQ's NamesrvStartup runs them), so the fault
suite can kill -9 the controller leader. Each is stopped by its PID."""

from __future__ import annotations

from pathlib import Path

from rocketq.testing.broker_process import CliProcess, free_port

BOOT_MARK = "The Controller boot success"


class NamesrvProcess(CliProcess):
    """One ``rocketq namesrv`` process with its controller; :meth:`start` again after a kill
    restarts it on the same ports and store."""

    boot_mark = BOOT_MARK

    def __init__(self, work_dir: Path, port: int, props: dict[str, str]) -> None:
        super().__init__(output_lines=200)
        self.work_dir = work_dir
        self.port = port
        self.props = props

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
        self._launch(argv, "name server", timeout_s)


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
