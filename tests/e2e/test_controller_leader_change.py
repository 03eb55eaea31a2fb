"""A new controller leader declares a paused master dead one heartbeat timeout after the
master's last heartbeat, whatever the change of leader: three name servers with embedded
controllers and a group of three ``rocketq broker`` processes (heartbeat timeout 2 s). The
master is SIGSTOPped right after a new controller leader is known: once after the controller
leader is killed with SIGKILL (the followers kept the table), once after the whole controller
group restarted while the brokers were paused (the new leader's table was empty: the 10 s
default timeout would have held the election); each time the controller names a new master
within the heartbeat timeout and a margin for the scan, the commit and a loaded machine."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rocketq.broker.controller_mode.controller_client import ControllerRequestError, ReplicaView
from rocketq.testing.failover.cluster import FAST_PROFILE, FaultCluster

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(180)]

GROUP = "broker-a"
TIMEOUT_S = FAST_PROFILE.heartbeat_timeout_s
#: the scan (200 ms), the election's commit and a loaded machine, beyond the timeout; the
#: 10 s default grace of an empty table cannot fit
BOUND_S = TIMEOUT_S + 2.5


async def new_leader(cluster: FaultCluster, old: str) -> float:
    """Until a controller other than ``old`` leads; when that was seen."""
    while True:
        cluster.ctl.leader_addr = ""
        try:
            if await asyncio.wait_for(cluster.ctl.find_leader(), 1) not in ("", old):
                return time.monotonic()
        except (ControllerRequestError, OSError, TimeoutError):
            pass
        await asyncio.sleep(0.02)


async def replaced_after(cluster: FaultCluster, master: str, epoch: int) -> float:
    """SIGSTOP the master; the seconds until the controller names another at a newer epoch."""
    broker = cluster.broker_at(master)
    cluster.pause(broker)
    paused = time.monotonic()
    try:
        while True:
            view = await cluster.view(GROUP)
            if view is not None and view.master_epoch > epoch and view.master_address:
                assert view.master_address != master
                return time.monotonic() - paused
            await asyncio.sleep(0.05)
    finally:
        cluster.resume(broker)


async def settled(cluster: FaultCluster, quiet_s: float = 1.5) -> ReplicaView:
    """Until the group is whole and its in-sync set unchanged for ``quiet_s`` (a shrink and
    expand after a pause of every broker is over)."""
    view = await cluster.wait_healthy(GROUP, 60)
    since = time.monotonic()
    while time.monotonic() - since < quiet_s:
        await asyncio.sleep(0.1)
        now = await cluster.wait_healthy(GROUP, 60)
        if now.sync_state_set_epoch != view.sync_state_set_epoch:
            view, since = now, time.monotonic()
    return view


async def test_a_master_paused_right_after_a_controller_change_is_replaced_in_time(
    tmp_path: Path,
) -> None:
    cluster = FaultCluster(tmp_path, {GROUP: 3}, profile=FAST_PROFILE)
    try:
        await cluster.start()
        view = await cluster.wait_healthy(GROUP, 60)
        leader = await cluster.controller_leader()
        leader.kill()
        await asyncio.wait_for(new_leader(cluster, leader.controller_addr), 30)
        await asyncio.to_thread(leader.start)
        view = await settled(cluster)
        after_kill = await asyncio.wait_for(
            replaced_after(cluster, view.master_address, view.master_epoch), 30
        )

        view = await cluster.wait_healthy(GROUP, 60, view.master_epoch + 1)
        for broker in cluster.brokers[GROUP]:
            cluster.pause(broker)
        for nameserver in cluster.nameservers:
            nameserver.kill()
        await asyncio.gather(*(asyncio.to_thread(n.start) for n in cluster.nameservers))
        await asyncio.wait_for(new_leader(cluster, ""), 30)  # elected with an empty table
        for broker in cluster.brokers[GROUP]:
            cluster.resume(broker)
        view = await settled(cluster)
        after_restart = await asyncio.wait_for(
            replaced_after(cluster, view.master_address, view.master_epoch), 30
        )
        print(
            f"replaced {after_kill:.2f} s after a leader kill, "
            f"{after_restart:.2f} s after a controller restart"
        )
        assert after_kill < BOUND_S
        assert after_restart < BOUND_S
    finally:
        await cluster.close()
