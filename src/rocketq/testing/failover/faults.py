"""The faults the schedule injects, each healed before it returns: kill -9 of the master or a
slave (restarted after a while), SIGSTOP of either for a few seconds (the paused master a
zombie that must never acknowledge), a rolling restart of the master (SIGTERM, start), and
kill -9 of the controller leader (its name server restarted after a while)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from rocketq.testing.failover.cluster import FaultCluster
from rocketq.testing.failover.load import Ledger

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
