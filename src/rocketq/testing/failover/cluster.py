"""The group under faults: three name server processes with embedded controllers, three
``rocketq broker`` processes in controller mode, and the faults the schedule injects, each
healed before :func:`inject` returns: kill -9 of the master or a slave (restarted after a
while), SIGSTOP of either for a few seconds (the paused master a zombie that must never
acknowledge), a rolling restart of the master (SIGTERM, start), kill -9 of the controller
leader (its name server restarted after a while). Every process is stopped by its PID in
:meth:`FaultCluster.close`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
    ReplicaView,
)
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.controller_mode import controller_mode_conf
from rocketq.testing.failover.load import Ledger
from rocketq.testing.failover.nameservers import NamesrvProcess, nameserver_group

BROKER_NAME = "broker-a"
POLL_S = 0.05


class FaultCluster:
    def __init__(self, root: Path, replicas: int = 3, controllers: int = 1) -> None:
        self.root = root
        self.replicas = replicas
        self.nameservers = nameserver_group(root, controllers)
        self.brokers: list[BrokerProcess] = []
        self.paused: set[int] = set()
        self.ctl: ControllerClient | None = None

    async def start(self) -> None:
        await asyncio.gather(*(asyncio.to_thread(n.start) for n in self.nameservers))
        addrs = [n.controller_addr for n in self.nameservers]
        self.ctl = ControllerClient(addrs)
        ns_addrs = ";".join(n.addr for n in self.nameservers)
        confs = [
            controller_mode_conf(self.root / f"b{i}", ns_addrs, addrs, name=BROKER_NAME)
            for i in range(self.replicas)
        ]
        self.brokers = [BrokerProcess(self.root / f"p{i}", c) for i, c in enumerate(confs)]
        await asyncio.gather(*(asyncio.to_thread(b.start) for b in self.brokers))

    async def view(self) -> ReplicaView | None:
        assert self.ctl is not None
        try:
            return await asyncio.wait_for(self.ctl.get_replica_info(BROKER_NAME), 2)
        except (ControllerRequestError, OSError, TimeoutError):
            self.ctl.leader_addr = ""  # the leader may be gone: ask the group again
            return None

    async def wait_healthy(self, timeout_s: float, min_epoch: int = 1) -> ReplicaView:
        """Until the controller names a master at ``min_epoch`` or later with every replica in
        sync (the heal is over); raises TimeoutError with the last view."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        view = None
        while asyncio.get_running_loop().time() < deadline:
            view = await self.view()
            if (
                view is not None
                and view.master_address
                and view.master_epoch >= min_epoch
                and len(view.sync_state_set) == self.replicas
            ):
                return view
            await asyncio.sleep(POLL_S)
        raise TimeoutError(f"group not healed in {timeout_s} s: {view}")

    async def controller_leader(self) -> NamesrvProcess:
        """The name server whose controller leads now (asked of the controllers)."""
        assert self.ctl is not None
        self.ctl.leader_addr = ""
        leader = await asyncio.wait_for(self.ctl.find_leader(), 10)
        return next(n for n in self.nameservers if n.controller_addr == leader)

    def broker_at(self, addr: str) -> BrokerProcess:
        return next(b for b in self.brokers if b.addr == addr)

    def pause(self, broker: BrokerProcess) -> None:
        assert broker.proc is not None
        os.kill(broker.proc.pid, signal.SIGSTOP)
        self.paused.add(broker.proc.pid)

    def resume(self, broker: BrokerProcess) -> None:
        assert broker.proc is not None
        os.kill(broker.proc.pid, signal.SIGCONT)
        self.paused.discard(broker.proc.pid)

    async def restart(self, broker: BrokerProcess) -> None:
        await asyncio.to_thread(broker.start)

    async def stop_brokers(self, master_addr: str) -> None:
        """SIGTERM every broker (SIGCONT first for a paused one), the slaves before the master:
        a clean stop before the stores are read back, with no election during it (a master
        stopped first would have a slave elected, in an epoch the others never see)."""
        for b in self.brokers:
            if b.proc is not None and b.proc.pid in self.paused:
                self.resume(b)
        slaves = [b for b in self.brokers if b.addr != master_addr]
        await asyncio.gather(*(asyncio.to_thread(b.stop) for b in slaves))
        await asyncio.to_thread(self.broker_at(master_addr).stop)

    async def close(self) -> None:
        """Every broker and name server killed by its PID (also on failure)."""
        for broker in self.brokers:
            with contextlib.suppress(Exception):  # stop the others whatever one does
                broker.kill()
        for nameserver in self.nameservers:
            with contextlib.suppress(Exception):
                nameserver.kill()
        if self.ctl is not None:
            with contextlib.suppress(Exception):
                await self.ctl.shutdown()

    @property
    def confs(self) -> list[dict[str, str]]:
        return [b.conf for b in self.brokers]


FAULTS = (
    "kill_master",
    "stop_master",
    "kill_slave",
    "stop_slave",
    "restart_master",
    "kill_controller_leader",
)
PAUSE_S = 4.0  # a SIGSTOP lasts this long (longer than the controller's heartbeat timeout)
DOWN_S = 2.0  # a killed process stays down this long before its restart


@dataclass(frozen=True, slots=True)
class Fault:
    name: str
    target: str  # the broker or controller address
    at: float  # monotonic time the fault began
    healed_at: float  # the process restarted or resumed
    epoch_before: int
    epoch_at_heal: int  # the group's epoch just before the heal (a paused master deposed?)

    def zombie_acks(self, ledger: Ledger) -> int:
        """SEND_OKs from a paused master, deposed during its pause, for sends made while it
        was paused: each one a violation (a zombie must never acknowledge)."""
        if self.name != "stop_master" or self.epoch_at_heal == self.epoch_before:
            return 0
        return sum(
            1
            for ack in ledger.acks
            if ack.broker == self.target and self.at < ack.sent_at < self.healed_at
        )


async def inject(cluster: FaultCluster, name: str, master_addr: str, epoch: int) -> Fault:
    """Apply the fault ``name``, then heal it (the schedule's own pacing sleeps here)."""
    if name == "kill_controller_leader":
        leader = await cluster.controller_leader()
        at = time.monotonic()
        leader.kill()
        await asyncio.sleep(DOWN_S)
        healed = time.monotonic()
        await asyncio.to_thread(leader.start)
        return Fault(name, leader.controller_addr, at, healed, epoch, epoch)
    master = cluster.broker_at(master_addr)
    slave = next(b for b in cluster.brokers if b.addr != master_addr)
    target = master if name.endswith("master") else slave
    at = time.monotonic()
    if name.startswith("kill"):
        target.kill()
        await asyncio.sleep(DOWN_S)
    elif name.startswith("stop"):
        cluster.pause(target)
        await asyncio.sleep(PAUSE_S)
    else:  # a rolling restart: the master stopped cleanly, then started (back as a slave)
        await asyncio.to_thread(target.stop)
    view = await cluster.view()
    epoch_at_heal = view.master_epoch if view is not None else epoch
    healed = time.monotonic()
    if name.startswith("stop"):
        cluster.resume(target)
    else:
        await cluster.restart(target)
    return Fault(name, target.addr, at, healed, epoch, epoch_at_heal)
