"""The group under faults: an in-process controller (embedded as a name server embeds it) and
name server, three ``rocketq broker`` processes in controller mode, and the faults: SIGKILL,
SIGSTOP/SIGCONT, restart. Every broker is stopped by its PID in :meth:`FaultCluster.close`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
    ReplicaView,
)
from rocketq.testing.broker import run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.controller_mode import controller_mode_conf
from rocketq.testing.controller_wire import ControllerGroup

BROKER_NAME = "broker-a"
POLL_S = 0.05


class FaultCluster:
    def __init__(self, root: Path, replicas: int = 3, controllers: int = 1) -> None:
        self.root = root
        self.replicas = replicas
        self.controllers = ControllerGroup(root / "controller", size=controllers)
        self.brokers: list[BrokerProcess] = []
        self.paused: set[int] = set()
        self.ctl: ControllerClient | None = None
        self._stack = contextlib.AsyncExitStack()

    async def start(self) -> None:
        await self.controllers.start_all()
        await self.controllers.leader()
        ns = await self._stack.enter_async_context(run_namesrv())
        addrs = self.controllers.addrs
        self.ctl = ControllerClient(addrs)
        confs = [
            controller_mode_conf(self.root / f"b{i}", ns.addr, addrs, name=BROKER_NAME)
            for i in range(self.replicas)
        ]
        self.brokers = [BrokerProcess(self.root / f"p{i}", c) for i, c in enumerate(confs)]
        await asyncio.gather(*(asyncio.to_thread(b.start) for b in self.brokers))

    async def view(self) -> ReplicaView | None:
        assert self.ctl is not None
        with contextlib.suppress(ControllerRequestError, OSError, TimeoutError):
            return await asyncio.wait_for(self.ctl.get_replica_info(BROKER_NAME), 2)
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

    async def stop_brokers(self) -> None:
        """SIGTERM every broker (SIGCONT first for a paused one): a clean stop before the
        stores are read back."""
        for b in self.brokers:
            if b.proc is not None and b.proc.pid in self.paused:
                self.resume(b)
        await asyncio.gather(*(asyncio.to_thread(b.stop) for b in self.brokers))

    async def close(self) -> None:
        """Every broker killed by its PID (also on failure), the controller and name server
        stopped."""
        for b in self.brokers:
            b.kill()
        if self.ctl is not None:
            with contextlib.suppress(Exception):
                await self.ctl.shutdown()
        await self._stack.aclose()
        await self.controllers.stop_all()

    @property
    def confs(self) -> list[dict[str, str]]:
        return [b.conf for b in self.brokers]
