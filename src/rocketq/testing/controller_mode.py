"""Controller-mode broker groups for tests: the controller profile shrunk to test time, brokers
in-process (:func:`run_controller_mode_broker`) or as ``broker.conf`` for a process
(:func:`controller_mode_conf`), and read-backs of what a group holds."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from rocketq.broker.config import BrokerConfig
from rocketq.broker.controller import BrokerController
from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
    ReplicaView,
)
from rocketq.broker.controller_mode.replicas_manager import ReplicasManager
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.store.ha.autoswitch_service import AutoSwitchHAService
from rocketq.testing.broker import SMALL_INDEX, run_broker
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.store import ha_store_properties
from rocketq.testing.wire import send_request

CLUSTER = "DefaultCluster"
SEGMENT_BYTES = 256 * 1024

#: the controller profile (allAckInSyncStateSet=true, haMaxTimeSlaveNotCatchup=5000,
#: brokerHeartbeatInterval=500, controllerHeartBeatTimeoutMills=3000), shrunk for tests
BROKER_PROFILE: dict[str, str] = {
    "enableControllerMode": "true",
    "allAckInSyncStateSet": "true",
    "haMaxTimeSlaveNotCatchup": "3000",
    "brokerHeartbeatInterval": "200",
    "controllerHeartBeatTimeoutMills": "2000",
    "syncBrokerMetadataPeriod": "500",
    "checkSyncStateSetPeriod": "500",
    "syncControllerMetadataPeriod": "1000",
    "registerNameServerPeriod": "1000",
}
STORE_KEYS: dict[str, str] = {
    **ha_store_properties(SEGMENT_BYTES),
    "diskSpaceCleanForciblyRatio": "99",
    "diskSpaceWarningLevelRatio": "99",
    **SMALL_INDEX,
}


def controller_mode_conf(
    root: Path, namesrv_addr: str, controller_addrs: list[str], *, name: str = "broker-a"
) -> dict[str, str]:
    """broker.conf of a controller-mode broker process (on any free listen and HA ports:
    BrokerProcess learns them)."""
    return {
        "brokerClusterName": CLUSTER,
        "brokerName": name,
        "brokerIP1": "127.0.0.1",
        "listenPort": "0",
        "haListenPort": "0",
        "namesrvAddr": namesrv_addr,
        "controllerAddr": ";".join(controller_addrs),
        "storePathRootDir": str(root),
        "flushDiskType": "ASYNC_FLUSH",
        **BROKER_PROFILE,
        **STORE_KEYS,
    }


@contextlib.asynccontextmanager
async def run_controller_mode_broker(
    root: str | os.PathLike[str],
    namesrv_addr: str | None,
    controller_addrs: list[str],
    *,
    name: str = "broker-a",
    **overrides: Any,
) -> AsyncIterator[BrokerController]:
    props = {"brokerName": name, "controllerAddr": ";".join(controller_addrs), **BROKER_PROFILE}
    config = BrokerConfig.from_properties({**props, **STORE_KEYS})
    async with run_broker(root, namesrv_addr=namesrv_addr, config=config, **overrides) as broker:
        yield broker


def manager(broker: BrokerController) -> ReplicasManager:
    rm = broker.replicas_manager
    assert rm is not None, "not a controller-mode broker"
    return rm


def autoswitch(broker: BrokerController) -> AutoSwitchHAService:
    service = broker.message_store.ha_service
    assert isinstance(service, AutoSwitchHAService)
    return service


async def send_one(
    client: RemotingClient, addr: str, topic: str, body: bytes, queue_id: int = 0
) -> RemotingCommand:
    """SEND_MESSAGE straight to ``addr`` (the raw answer: code, remark, offsets)."""
    return await client.invoke(addr, send_request(topic, body, queue_id=queue_id), 10)


async def eventually(
    probe: Callable[[], Awaitable[bool]], timeout_s: float, step_s: float = 0.05
) -> bool:
    """Whether an async probe (a controller or broker request) holds within ``timeout_s``;
    a refused or failed request counts as not yet."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(ControllerRequestError, OSError, TimeoutError):
            if await probe():
                return True
        await asyncio.sleep(step_s)
    return False


class ReplicaWatch:
    """The controller's record of one broker group, read again at each :meth:`reaches`: the
    controller-mode e2e tests poll it (with :func:`eventually`) until a master and an in-sync
    set appear, then act on ``view``."""

    def __init__(self, ctl: ControllerClient, broker_name: str) -> None:
        self._ctl = ctl
        self._broker_name = broker_name
        self.view = ReplicaView(None, "", 0, 0, frozenset())

    async def reaches(self, size: int, epoch: int) -> bool:
        """At ``epoch`` with at least ``size`` in sync (a new master starts alone, and a live
        slave may rejoin it before a poll sees that)."""
        self.view = await self._ctl.get_replica_info(self._broker_name)
        return self.view.master_epoch == epoch and len(self.view.sync_state_set) >= size


def broker_processes(
    tmp_path: Path,
    namesrv_addr: str,
    controller_addrs: list[str],
    count: int,
    extra: dict[str, str] | None = None,
) -> list[BrokerProcess]:
    """``count`` ``rocketq broker`` processes of one group in controller mode, not started:
    :func:`controller_mode_conf` under ``tmp_path/b<i>`` plus ``extra``, each run from
    ``tmp_path/p<i>``."""
    return [
        BrokerProcess(
            tmp_path / f"p{i}",
            {
                **controller_mode_conf(tmp_path / f"b{i}", namesrv_addr, controller_addrs),
                **(extra or {}),
            },
        )
        for i in range(count)
    ]


async def start_processes(brokers: list[BrokerProcess]) -> None:
    """Start broker processes side by side (each waits for its boot line in a thread)."""
    await asyncio.gather(*(asyncio.to_thread(b.start) for b in brokers))
