"""The fault suite's cluster starts whatever holds the ports it picked. Each controller's
port is picked before it starts (it names itself in its peers list, the proxies in front of it
need a target); here every first pick is held open by the test, as another process could take
it between the pick and the bind. The controllers move to fresh ports, their proxies with
them; the brokers bind ports of their own (no pick at all) and their links are filed under
the addresses they bound: the group elects, heals and is partitioned through them."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from rocketq.testing.broker_process import free_port
from rocketq.testing.failover.cluster import FAST_PROFILE, FaultCluster
from rocketq.testing.failover.faults import inject

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(180)]

GROUP = "broker-a"
CONTROLLERS = 3


def held_listeners(count: int) -> list[socket.socket]:
    """Loopback ports held listening (a server's bind of one fails with EADDRINUSE)."""
    held = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        held.append(s)
    return held


async def test_the_cluster_starts_while_every_picked_controller_port_is_taken(
    tmp_path: Path,
) -> None:
    held = held_listeners(CONTROLLERS)
    held_ports = [int(s.getsockname()[1]) for s in held]
    picks: list[int] = []

    def pick_port() -> int:
        """The held ports first (taken after the pick, before the bind), then free ones."""
        port = held_ports[len(picks)] if len(picks) < len(held_ports) else free_port()
        picks.append(port)
        return port

    cluster = FaultCluster(tmp_path, {GROUP: 2}, CONTROLLERS, FAST_PROFILE, pick_port=pick_port)
    try:
        await cluster.start()
        assert picks[:CONTROLLERS] == held_ports
        assert len(picks) == 2 * CONTROLLERS  # one fresh port per controller, none for brokers
        real = [int(addr.rsplit(":", 1)[1]) for addr in cluster.controller_addrs]
        assert sorted(real) == sorted(picks[CONTROLLERS:])
        brokers = {b.addr for b in cluster.brokers[GROUP]}
        assert set(cluster.links.brokers) == brokers  # links filed under the bound addresses
        # Raft between the moved controllers and the brokers' heartbeats all cross the proxies
        view = await cluster.wait_healthy(GROUP, 60)
        assert view.master_address in brokers
        leader = await cluster.controller_leader()
        assert leader.controller_addr in cluster.controller_addrs
        # the master's own links, found by its bound address, cut it off: a slave takes over
        fault = await inject(cluster, "partition_master", GROUP, view)
        healed = await cluster.wait_healthy(GROUP, 60, view.master_epoch + 1)
        assert fault.epoch_at_heal > fault.epoch_before
        assert healed.master_address != view.master_address
    finally:
        await cluster.close()
        for s in held:
            s.close()
