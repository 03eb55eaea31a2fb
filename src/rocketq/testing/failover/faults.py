"""The faults of the schedule, each healed before :func:`inject` returns:

- ``kill_master`` / ``kill_slave``: kill -9, restarted after ``DOWN_S``;
- ``stop_master`` / ``stop_slave``: SIGSTOP, then SIGCONT; the master's pause outlasts the
  controllers' heartbeat timeout (a zombie that must never acknowledge), the slave's the
  master's ``haMaxTimeSlaveNotCatchup`` (the in-sync set shrinks);
- ``restart_master``: a rolling restart (SIGTERM, start: back as a slave);
- ``kill_controller_leader``: kill -9 of the leading controller's name server;
- ``kill_master_and_controller_leader``: both at once;
- ``kill_master_while_expanding``: a slave killed, its restart awaited after the in-sync set
  dropped it, and the master killed as soon as the slave is back (it is rejoining);
- ``partition_master``: the master's links to every controller silenced while clients and
  slaves still reach it;
- ``partition_master_with_controller``: the master reaches the controller leader only, and
  that controller is cut off from the other two (it must step down; the majority elects);
- ``deafen_master``: one way only: the master's heartbeats reach every controller, their
  answers never reach it (it stays master for them: no election, nothing lost);
- ``deafen_controller_leader``: one way only: the controller leader hears no other controller
  while they hear it (CheckQuorum makes it step down; the others elect; 0 failed sends);
- ``partition_clients_from_master``: the clients (producers, consumers, POP) cut from the
  master while the controllers and its slaves still reach it (no election: an outage for its
  producers until the heal, nothing lost).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from rocketq.broker.controller_mode.controller_client import ReplicaView
from rocketq.testing.failover.cluster import FaultCluster
from rocketq.testing.failover.load import Ledger

FAULTS = (
    "kill_master",
    "stop_master",
    "kill_slave",
    "stop_slave",
    "restart_master",
    "kill_controller_leader",
    "kill_master_and_controller_leader",
    "kill_master_while_expanding",
    "partition_master",
    "partition_master_with_controller",
    "deafen_master",
    "deafen_controller_leader",
    "partition_clients_from_master",
)
MASTER_FAULTS = frozenset(f for f in FAULTS if "master" in f)
#: the faults that need the clients behind proxies (FaultCluster's ``client_proxies``)
CLIENT_FAULTS = frozenset({"partition_clients_from_master"})
DOWN_S = 2.0  # a killed process stays down this long before its restart
SILENT_MARGIN_S = 2.0  # a pause or partition lasts the timeout it must trip plus this


@dataclass(frozen=True, slots=True)
class Fault:
    name: str
    group: str
    target: str  # the broker or controller address
    at: float  # monotonic time the fault began (for a master fault: the master's)
    healed_at: float  # the process restarted or resumed, the link restored
    epoch_before: int
    epoch_at_heal: int  # the group's epoch just before the heal (a silent master deposed?)

    def zombie_acks(self, ledger: Ledger, until: float) -> int:
        """SEND_OKs from a deposed master for sends it could not have acknowledged: a paused
        master's for sends made during its pause, and any old master's for sends made after
        another replica of its group acknowledged (a new master served); acks up to ``until``
        (the end of the fault's cycle)."""
        if self.name not in MASTER_FAULTS or self.name == "restart_master":
            return 0
        acks = [a for a in ledger.acks if a.group == self.group and self.at < a.at <= until]
        others = [a.at for a in acks if a.broker != self.target]
        served = min(others, default=float("inf"))
        late = sum(1 for a in acks if a.broker == self.target and a.sent_at > served)
        paused = 0
        if self.name == "stop_master" and self.epoch_at_heal != self.epoch_before:
            paused = sum(
                1 for a in acks if a.broker == self.target and self.at < a.sent_at < self.healed_at
            )
        return late + paused


async def inject(cluster: FaultCluster, name: str, group: str, view: ReplicaView) -> Fault:
    """Apply the fault ``name`` to ``group``, then heal it."""
    master = cluster.broker_at(view.master_address)
    slaves = [b for b in cluster.brokers[group] if b is not master]
    silent_s = cluster.profile.heartbeat_timeout_s + SILENT_MARGIN_S
    epoch = view.master_epoch
    if name == "kill_controller_leader":
        leader = await cluster.controller_leader()
        at = time.monotonic()
        leader.kill()
        await asyncio.sleep(DOWN_S)
        healed = time.monotonic()
        await asyncio.to_thread(leader.start)
        return Fault(name, group, leader.controller_addr, at, healed, epoch, epoch)
    if name == "kill_master_and_controller_leader":
        leader = await cluster.controller_leader()
        at = time.monotonic()
        leader.kill()
        master.kill()
        await asyncio.sleep(DOWN_S)
        epoch_at_heal = await _epoch(cluster, group, epoch)
        healed = time.monotonic()
        await asyncio.to_thread(leader.start)
        await cluster.restart(master)
        return Fault(name, group, master.addr, at, healed, epoch, epoch_at_heal)
    if name == "kill_master_while_expanding":
        slave = slaves[0]
        slave.kill()
        await _until_out_of_sync(cluster, group, cluster.profile.catchup_s + 5)
        await cluster.restart(slave)
        at = time.monotonic()
        master.kill()  # the slave is back but not yet in sync: the set is expanding
        await asyncio.sleep(DOWN_S)
        epoch_at_heal = await _epoch(cluster, group, epoch)
        healed = time.monotonic()
        await cluster.restart(master)
        return Fault(name, group, master.addr, at, healed, epoch, epoch_at_heal)
    if name == "deafen_controller_leader":
        leader = await cluster.controller_leader()
        at = time.monotonic()
        cluster.links.deafen_controller(leader.peer_id)
        await asyncio.sleep(silent_s + cluster.profile.heartbeat_timeout_s)
        healed = time.monotonic()
        cluster.links.heal()
        return Fault(name, group, leader.controller_addr, at, healed, epoch, epoch)
    if name.startswith(("partition", "deafen")):
        at = time.monotonic()
        if name == "partition_clients_from_master":
            assert cluster.clients is not None, "FaultCluster(client_proxies=True) needed"
            cluster.clients.isolate(master.addr)
        elif name == "deafen_master":
            cluster.links.isolate_broker(master.addr, up=False)
        elif name == "partition_master_with_controller":
            leader = await cluster.controller_leader()
            cluster.links.isolate_controller(leader.peer_id)
            cluster.links.isolate_broker(master.addr, keep=[leader.peer_id])
            silent_s += cluster.profile.heartbeat_timeout_s  # the majority elects a leader first
        else:
            cluster.links.isolate_broker(master.addr)
        await asyncio.sleep(silent_s)
        epoch_at_heal = await _epoch(cluster, group, epoch)
        healed = time.monotonic()
        cluster.links.heal()
        if cluster.clients is not None:
            cluster.clients.heal()
        return Fault(name, group, master.addr, at, healed, epoch, epoch_at_heal)
    target = master if name.endswith("master") else slaves[0]
    at = time.monotonic()
    if name.startswith("kill"):
        target.kill()
        await asyncio.sleep(DOWN_S)
    elif name.startswith("stop"):
        cluster.pause(target)
        pause_s = silent_s if target is master else cluster.profile.catchup_s + SILENT_MARGIN_S
        await asyncio.sleep(pause_s)
    else:  # a rolling restart: the master stopped cleanly, then started (back as a slave)
        await asyncio.to_thread(target.stop)
    epoch_at_heal = await _epoch(cluster, group, epoch)
    healed = time.monotonic()
    if name.startswith("stop"):
        cluster.resume(target)
    else:
        await cluster.restart(target)
    return Fault(name, group, target.addr, at, healed, epoch, epoch_at_heal)


async def _epoch(cluster: FaultCluster, group: str, default: int) -> int:
    view = await cluster.view(group)
    return view.master_epoch if view is not None else default


async def _until_out_of_sync(cluster: FaultCluster, group: str, timeout_s: float) -> None:
    """Until the in-sync set of ``group`` is smaller than the group (the killed slave left
    it), or the timeout: a restart then rejoins and expands the set."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        view = await cluster.view(group)
        if view is not None and len(view.sync_state_set) < cluster.groups[group]:
            return
        await asyncio.sleep(0.05)
