"""One controller-mode broker group for the e2e tests that kill, pause and restart its brokers:
an in-process controller and name server, ``count`` ``rocketq broker`` processes (the
controller profile shrunk to test time, :mod:`rocketq.testing.controller_mode`), a remoting
client and the controller's record of the group.

:func:`run_controller_mode_group` starts it and returns once the controller has named the
first master with every broker in sync (epoch 1); on the way out it resumes what a test
paused, kills every broker left running and stops the controller, in that order, whatever
the test did. The helpers assert each answer, so a test reads as its scenario:

    async with run_controller_mode_group(tmp_path, 3) as group:
        await group.create_topic(TOPIC)
        await group.send(TOPIC, [b"m0", b"m1"])
        group.at(group.master).kill()
        new_master = await group.elected(1, 2)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

from rocketq.broker.controller_mode.controller_client import ControllerClient
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.controller_mode import (
    ReplicaWatch,
    broker_processes,
    eventually,
    send_one,
    start_processes,
)
from rocketq.testing.controller_wire import ControllerGroup
from rocketq.testing.pop import Popped, pop
from rocketq.testing.wire import create_topic_request, request

BROKER_NAME = "broker-a"
#: the first election, with every broker process starting on a loaded 2-core machine
START_TIMEOUT_S = 40.0


class ControllerModeGroup:
    """A running group: its broker processes, the controller's view of it (``watch``), a
    client for raw requests, and the name server's address for real producers."""

    def __init__(
        self,
        ctl: ControllerClient,
        namesrv_addr: str,
        brokers: list[BrokerProcess],
        broker_name: str,
    ) -> None:
        self.ctl = ctl
        self.namesrv_addr = namesrv_addr
        self.brokers = brokers
        self.broker_name = broker_name
        self.client = RemotingClient()
        self.watch = ReplicaWatch(ctl, broker_name)
        self._paused: dict[int, BrokerProcess] = {}

    @property
    def master(self) -> str:
        """The master's address in the controller's record as last read."""
        return self.watch.view.master_address

    def at(self, addr: str) -> BrokerProcess:
        return next(b for b in self.brokers if b.addr == addr)

    def other_than(self, *addrs: str) -> BrokerProcess:
        """The first broker at none of ``addrs``."""
        return next(b for b in self.brokers if b.addr not in addrs)

    async def elected(self, size: int, epoch: int, timeout_s: float = 15.0) -> str:
        """Until the controller names a master at ``epoch`` with at least ``size`` in sync;
        that master's address."""
        watch = self.watch
        assert await eventually(lambda: watch.reaches(size, epoch), timeout_s), watch.view
        return self.master

    async def create_topic(self, topic: str, queues: int = 4, addr: str | None = None) -> None:
        """UPDATE_AND_CREATE_TOPIC on ``addr`` (the master by default), answered SUCCESS."""
        created = await self.client.invoke(
            addr or self.master, create_topic_request(topic, queues), 10
        )
        assert created.code == ResponseCode.SUCCESS, created.remark

    async def send(self, topic: str, bodies: Iterable[bytes], addr: str | None = None) -> None:
        """One SYNC send per body to queue 0 of ``addr`` (the master by default), each
        answered SUCCESS (with allAckInSyncStateSet: held by every in-sync replica)."""
        target = addr or self.master
        for body in bodies:
            sent = await send_one(self.client, target, topic, body)
            assert sent.code == ResponseCode.SUCCESS, sent.remark

    async def max_offset(self, addr: str, topic: str, queue_id: int = 0) -> int:
        """The consume queue's max offset on ``addr`` (built up to the confirm offset)."""
        response = await self.client.invoke(
            addr, request(RequestCode.GET_MAX_OFFSET, topic=topic, queueId=queue_id), 3
        )
        assert response.code == ResponseCode.SUCCESS, response.remark
        return int(response.ext_fields["offset"])

    async def queued(self, addr: str, topic: str, count: int, timeout_s: float = 10.0) -> bool:
        """Whether queue 0 of ``topic`` on ``addr`` holds ``count`` messages within
        ``timeout_s``."""

        async def probe() -> bool:
            return await self.max_offset(addr, topic) >= count

        return await eventually(probe, timeout_s)

    async def pop(
        self, addr: str, group: str, topic: str, **options: int
    ) -> tuple[RemotingCommand, list[Popped]]:
        return await pop(self.client, addr, self.broker_name, group, topic, **options)

    async def pop_for(
        self, seconds: float, addr: str, group: str, topic: str, **options: int
    ) -> list[Popped]:
        """Every message popped from ``addr`` in ``seconds`` of long polls (each 500 ms,
        ``invisible_ms`` 60 s unless given): what comes back in that window."""
        options = {"invisible_ms": 60_000, "poll_ms": 500, **options}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        got: list[Popped] = []
        while loop.time() < deadline:
            got += (await self.pop(addr, group, topic, **options))[1]
        return got

    def pause(self, broker: BrokerProcess) -> None:
        """SIGSTOP (resumed on the way out if the test does not)."""
        assert broker.proc is not None
        os.kill(broker.proc.pid, signal.SIGSTOP)
        self._paused[broker.proc.pid] = broker

    def resume(self, broker: BrokerProcess) -> None:
        assert broker.proc is not None
        self._paused.pop(broker.proc.pid, None)
        os.kill(broker.proc.pid, signal.SIGCONT)

    def resume_all(self) -> None:
        for pid in list(self._paused):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self._paused.clear()

    async def stop(self, *brokers: BrokerProcess) -> None:
        """SIGTERM ``brokers`` (every one by default) side by side, each shutting down cleanly
        (its store closed for a read-back), the event loop free meanwhile: a broker's shutdown
        unregisters from the in-process name server, which must answer."""
        await asyncio.gather(*(asyncio.to_thread(b.stop) for b in brokers or self.brokers))

    def conf_at(self, addr: str) -> dict[str, str]:
        """The broker.conf of the broker listening at ``addr`` (running or not)."""
        return next(b.conf for b in self.brokers if addr.endswith(":" + b.conf["listenPort"]))


@contextlib.asynccontextmanager
async def run_controller_mode_group(
    tmp_path: Path,
    count: int,
    extra: dict[str, str] | None = None,
    *,
    broker_name: str = BROKER_NAME,
) -> AsyncIterator[ControllerModeGroup]:
    """One controller, a name server and ``count`` broker processes (``extra`` added to each
    broker.conf) under ``tmp_path``; yields once all ``count`` are in the in-sync set of
    epoch 1.

    On the way out the controller stops before the brokers are killed: a broker's closed
    connection makes the controller start an election, and a shutdown that cancels one may
    wait out its retries (Python 3.11's ``asyncio.wait_for`` can swallow a cancellation)."""
    brokers: list[BrokerProcess] = []
    async with contextlib.AsyncExitStack() as stack:
        ns = await stack.enter_async_context(run_namesrv())
        stack.callback(_kill, brokers)
        controllers = ControllerGroup(tmp_path / "controller", size=1)
        stack.push_async_callback(controllers.stop_all)
        await controllers.start_all()
        leader = await controllers.leader()
        ctl = ControllerClient([leader.addr])
        stack.push_async_callback(ctl.shutdown)
        brokers += broker_processes(tmp_path, ns.addr, [leader.addr], count, extra)
        group = ControllerModeGroup(ctl, ns.addr, brokers, broker_name)
        stack.push_async_callback(group.client.shutdown)
        stack.callback(group.resume_all)
        await start_processes(brokers)
        await group.elected(count, 1, START_TIMEOUT_S)
        yield group


def _kill(brokers: list[BrokerProcess]) -> None:
    for b in brokers:
        b.kill()
