"""The cluster under faults: three name server processes with embedded controllers (one Raft
group), and broker groups of ``rocketq broker`` processes in controller mode (by default a group
of three, ``broker-a``, and a group of two, ``broker-b``), every controller link behind a proxy
a partition can silence (:mod:`.partition`). The faults themselves are in :mod:`.faults`. Every
process is stopped by its PID and every proxy closed in :meth:`FaultCluster.close`.

Ports: every broker starts on port 0 and names the ports it bound in its boot line; its
controller links (proxies) are made before it starts, under a key, and filed under its address
once it has booted, as are the clients' proxies in front of it. A controller's port is picked
(it names itself in its peers list) and moved to a fresh one, proxies and all, if it was taken
before the first start (:func:`~.nameservers.start_nameserver_group`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rocketq.broker.controller_mode.controller_client import (
    ControllerRequestError,
    ReplicaView,
)
from rocketq.testing.broker_process import BrokerProcess, free_port
from rocketq.testing.controller_mode import controller_mode_conf
from rocketq.testing.failover.nameservers import (
    NamesrvProcess,
    nameserver_group,
    start_nameserver_group,
)
from rocketq.testing.failover.partition import AliasedControllerClient, ClientLinks

GROUPS = {"broker-a": 3, "broker-b": 2}
POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class Profile:
    """The controller profile: broker.conf keys over the test defaults of
    ``rocketq.testing.controller_mode``, and the controllers' scan interval."""

    name: str
    broker: dict[str, str]
    scan_ms: int

    @property
    def heartbeat_timeout_s(self) -> float:
        return int(self.broker["controllerHeartBeatTimeoutMills"]) / 1000

    @property
    def catchup_s(self) -> float:
        return int(self.broker["haMaxTimeSlaveNotCatchup"]) / 1000


#: issue 20's controller profile (the default of the runner and of make test)
ISSUE_PROFILE = Profile(
    "issue",
    {
        "allAckInSyncStateSet": "true",
        "haMaxTimeSlaveNotCatchup": "5000",
        "brokerHeartbeatInterval": "500",
        "controllerHeartBeatTimeoutMills": "3000",
    },
    scan_ms=500,
)
#: the shrunk profile of rocketq.testing.controller_mode (2 s heartbeat timeout, 3 s catch-up)
FAST_PROFILE = Profile(
    "fast",
    {
        "allAckInSyncStateSet": "true",
        "haMaxTimeSlaveNotCatchup": "3000",
        "brokerHeartbeatInterval": "200",
        "controllerHeartBeatTimeoutMills": "2000",
    },
    scan_ms=200,
)
PROFILES = {p.name: p for p in (ISSUE_PROFILE, FAST_PROFILE)}


class FaultCluster:
    def __init__(
        self,
        root: Path,
        groups: dict[str, int] | None = None,
        controllers: int = 3,
        profile: Profile = ISSUE_PROFILE,
        client_proxies: bool = False,
        pick_port: Callable[[], int] = free_port,
    ) -> None:
        self.root = root
        self.groups = dict(groups or GROUPS)
        self.profile = profile
        #: picks each controller's port (again when the one picked was taken)
        self.pick_port = pick_port
        self.nameservers, self.links = nameserver_group(
            root, controllers, profile.scan_ms, pick_port
        )
        self.brokers: dict[str, list[BrokerProcess]] = {}
        self.paused: set[int] = set()
        self.ctl = AliasedControllerClient(self.controller_addrs, self.links.aliases)
        #: with ``client_proxies``, the clients reach each broker through a proxy of its own
        self.clients = ClientLinks() if client_proxies else None

    @property
    def via(self) -> dict[str, str]:
        """broker address -> the address clients reach it by (empty: directly)."""
        return {} if self.clients is None else self.clients.via

    @property
    def controller_addrs(self) -> list[str]:
        return [n.controller_addr for n in self.nameservers]

    async def start(self) -> None:
        await start_nameserver_group(self.nameservers, self.links, self.pick_port)
        # the controllers' addresses are final now (a taken port was replaced)
        self.ctl.controller_addrs = self.controller_addrs
        self.ctl.aliases = self.links.aliases
        ns_addrs = ";".join(n.addr for n in self.nameservers)
        keys: dict[str, BrokerProcess] = {}
        for name, size in self.groups.items():
            members = []
            for i in range(size):
                conf = controller_mode_conf(self.root / f"{name}-{i}", ns_addrs, [], name=name)
                conf.update(self.profile.broker)  # listenPort and haListenPort stay 0
                conf["controllerAddr"] = self.links.broker_addrs(f"{name}-{i}")
                members.append(BrokerProcess(self.root / f"{name}-p{i}", conf))
                keys[f"{name}-{i}"] = members[-1]
            self.brokers[name] = members
        await asyncio.gather(*(asyncio.to_thread(b.start) for b in keys.values()))
        for key, broker in keys.items():  # the ports each bound, from its boot line
            self.links.rename_broker(key, broker.addr)
            if self.clients is not None:
                self.clients.add(broker.addr)

    async def view(self, group: str) -> ReplicaView | None:
        try:
            return await asyncio.wait_for(self.ctl.get_replica_info(group), 2)
        except (ControllerRequestError, OSError, TimeoutError):
            self.ctl.leader_addr = ""  # the leader may be gone: ask the group again
            return None

    async def wait_healthy(self, group: str, timeout_s: float, min_epoch: int = 1) -> ReplicaView:
        """Until the controller names a master of ``group`` at ``min_epoch`` or later with every
        replica in sync (the heal is over); raises TimeoutError with the last view."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        view = None
        while asyncio.get_running_loop().time() < deadline:
            view = await self.view(group)
            if (
                view is not None
                and view.master_address
                and view.master_epoch >= min_epoch
                and len(view.sync_state_set) == self.groups[group]
            ):
                return view
            await asyncio.sleep(POLL_S)
        tails = "\n".join(
            f"--- {b.addr}:\n" + "\n".join(list(b.output)[-12:]) for b in self.brokers[group]
        )
        raise TimeoutError(f"{group} not healed in {timeout_s} s: {view}\n{tails}")

    async def controller_leader(self) -> NamesrvProcess:
        """The name server whose controller leads now (asked of the controllers)."""
        self.ctl.leader_addr = ""
        leader = await asyncio.wait_for(self.ctl.find_leader(), 10)
        return next(n for n in self.nameservers if n.controller_addr == leader)

    def broker_at(self, addr: str) -> BrokerProcess:
        return next(b for members in self.brokers.values() for b in members if b.addr == addr)

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

    async def stop_group(self, group: str, master_addr: str) -> None:
        """SIGTERM every broker of the group (SIGCONT first for a paused one), the slaves
        before the master: a clean stop before the stores are read back, with no election
        during it (a master stopped first would have a slave elected, in an epoch the others
        never see)."""
        members = self.brokers[group]
        for b in members:
            if b.proc is not None and b.proc.pid in self.paused:
                self.resume(b)
        slaves = [b for b in members if b.addr != master_addr]
        await asyncio.gather(*(asyncio.to_thread(b.stop) for b in slaves))
        await asyncio.to_thread(self.broker_at(master_addr).stop)

    async def close(self) -> None:
        """Every broker and name server killed by its PID, every proxy closed (also on
        failure)."""
        for members in self.brokers.values():
            for broker in members:
                with contextlib.suppress(Exception):  # stop the others whatever one does
                    broker.kill()
        for nameserver in self.nameservers:
            with contextlib.suppress(Exception):
                nameserver.kill()
        self.links.close()
        if self.clients is not None:
            self.clients.close()
        with contextlib.suppress(Exception):
            await self.ctl.shutdown()

    def confs(self, group: str) -> list[dict[str, str]]:
        return [b.conf for b in self.brokers[group]]
