"""README "Replication", several machines: RocketMQ's own ``conf/2m-2s-sync`` files for
broker-a (master and slave), each run as ``rocketq broker -c``, plus only what the README says
differs per machine (brokerIP1, namesrvAddr listing every name server, listenPort, a store).
No haListenPort and no haMasterAddress: the master's HA port is its listen port + 1 and the
slave finds it through the name servers. A SYNC_MASTER's SEND_OK proves the slave linked."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.client.status import SendStatus
from rocketq.testing.broker import run_namesrv
from rocketq.testing.broker_process import BrokerProcess, free_port_pair, start_on_picked_ports
from rocketq.testing.wait import until
from rocketq.testing.wire import create_topic
from tests.e2e.ha_support import FAST_PRODUCER, STORE_KEYS, commitlog_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

# distribution/conf/2m-2s-sync/broker-a.properties and broker-a-s.properties, key for key
SAMPLE_COMMON = {
    "brokerClusterName": "DefaultCluster",
    "brokerName": "broker-a",
    "deleteWhen": "04",
    "fileReservedTime": "48",
    "flushDiskType": "ASYNC_FLUSH",
}
SAMPLE_MASTER = {**SAMPLE_COMMON, "brokerId": "0", "brokerRole": "SYNC_MASTER"}
SAMPLE_SLAVE = {**SAMPLE_COMMON, "brokerId": "1", "brokerRole": "SLAVE"}
# small files on this shared machine (not a per-machine difference)
SMALL = {k: v for k, v in STORE_KEYS.items() if k != "haSendHeartbeatInterval"}


async def test_rocketmq_2m_2s_sync_files_replicate_as_the_readme_maps_them(
    tmp_path: Path,
) -> None:
    async with run_namesrv() as ns1, run_namesrv() as ns2:
        per_machine = {"brokerIP1": "127.0.0.1", "namesrvAddr": f"{ns1.addr};{ns2.addr}"}
        # no haListenPort: the ports are picked (a pair), and picked again if one is taken
        master = await asyncio.to_thread(
            start_on_picked_ports,
            lambda: BrokerProcess(
                tmp_path / "m",
                {**SAMPLE_MASTER, **per_machine, **SMALL}
                | {
                    "listenPort": str(free_port_pair()),
                    "storePathRootDir": str(tmp_path / "m-store"),
                },
            ),
        )
        port_m = master.port
        try:
            slave = await asyncio.to_thread(
                start_on_picked_ports,
                lambda: BrokerProcess(
                    tmp_path / "s",
                    {**SAMPLE_SLAVE, **per_machine, **SMALL, "slaveReadEnable": "true"}
                    | {
                        "listenPort": str(free_port_pair()),
                        "storePathRootDir": str(tmp_path / "s-store"),
                    },
                ),
            )
            try:
                await create_topic([master.addr], "ConfTopic")
                # the master's HA port is its listen port + 1; the slave finds it by itself
                assert any(f"listening on port {port_m + 1}" in x for x in master.output)
                linked = f"connected to master 127.0.0.1:{port_m + 1}"
                assert await until(lambda: any(linked in x for x in slave.output), 60), "\n".join(
                    slave.output
                )
                async with Producer("pg", namesrv_addr=ns2.addr, **FAST_PRODUCER) as producer:
                    statuses: list[SendStatus] = []
                    deadline = time.monotonic() + 60  # SLAVE_NOT_AVAILABLE until the link is up
                    while statuses[-5:] != [SendStatus.SEND_OK] * 5 and time.monotonic() < deadline:
                        result = await producer.send(Message("ConfTopic", b"conf"))
                        statuses.append(result.status)
                        if result.status is not SendStatus.SEND_OK:
                            await asyncio.sleep(0.1)
                assert statuses[-5:] == [SendStatus.SEND_OK] * 5, statuses
            finally:
                await asyncio.to_thread(slave.stop)  # the loop serves the name servers
        finally:
            await asyncio.to_thread(master.stop)
    m_log, s_log = tmp_path / "m-store" / "commitlog", tmp_path / "s-store" / "commitlog"
    master_bytes = commitlog_bytes(str(m_log), 1 << 40)
    slave_bytes = commitlog_bytes(str(s_log), 1 << 40)
    acked_end = len(master_bytes.rstrip(b"\0"))
    assert slave_bytes[:acked_end] == master_bytes[:acked_end]
