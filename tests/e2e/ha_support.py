"""Shared parts of the replication fault tests: broker.conf for a master process, an
in-process slave, a sender pool that records every acknowledged message (the ledger), and
read-back checks against both stores."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketq.broker.config import BrokerRole
from rocketq.broker.controller import BrokerController
from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.client.status import SendStatus
from rocketq.common.message_decoder import decode_message
from rocketq.common.message_id import decode_message_id
from rocketq.errors import RocketQError
from rocketq.store.config import StoreConfig
from rocketq.store.message_store import MessageStore
from rocketq.testing.broker import SMALL_INDEX, run_broker
from rocketq.testing.store import ha_store_properties

TOPIC = "TopicHA"
SEGMENT = 256 * 1024
STORE_KEYS = {
    **ha_store_properties(SEGMENT),
    # the shared machine's disk runs above 82 %: no forced clean-up of acked messages here
    "diskSpaceCleanForciblyRatio": "99",
    "diskSpaceWarningLevelRatio": "99",
    **SMALL_INDEX,
}
FAST_PRODUCER: dict[str, Any] = {
    "poll_name_server_interval_s": 0.5,
    "heartbeat_broker_interval_s": 1.0,
    "send_msg_timeout_s": 3.0,
    "retry_times_when_send_failed": 0,
}


def master_conf(
    root: Path, namesrv_addr: str, *, name: str = "broker-a", role: str = "SYNC_MASTER"
) -> dict[str, str]:
    return {
        "brokerClusterName": "HACluster",
        "brokerName": name,
        "brokerId": "0",
        "brokerRole": role,
        "flushDiskType": "SYNC_FLUSH",
        "brokerIP1": "127.0.0.1",
        "namesrvAddr": namesrv_addr,  # ports: 0, BrokerProcess learns them (its conf)
        "storePathRootDir": str(root),
        "registerNameServerPeriod": "1000",
        **STORE_KEYS,
    }


@contextlib.asynccontextmanager
async def run_slave(
    root: Path, namesrv_addr: str, master: dict[str, str], **overrides: Any
) -> AsyncIterator[BrokerController]:
    """A slave of ``master`` (a BrokerProcess's conf): linked to its HA port if it has
    started, else to the HA address the name server returns when the slave registers."""
    ha_port = master.get("haListenPort", "0")
    linked = {"haMasterAddress": f"127.0.0.1:{ha_port}"} if ha_port != "0" else {}
    async with run_broker(
        root,
        namesrv_addr=namesrv_addr,
        broker_cluster_name="HACluster",
        broker_name=master["brokerName"],
        broker_id=1,
        broker_role=BrokerRole.SLAVE,
        slave_read_enable=True,
        slave_sync_interval_ms=500,
        register_name_server_period_ms=1000,
        store_properties={
            **STORE_KEYS,
            **linked,
            **overrides.pop("store_properties", {}),
        },
        **overrides,
    ) as slave:
        yield slave


@dataclass(frozen=True)
class Ack:
    body: bytes
    queue_id: int
    queue_offset: int
    phy_offset: int
    broker_name: str


@dataclass
class Ledger:
    acked: list[Ack] = field(default_factory=list)
    failed: int = 0
    not_ok: Counter[str] = field(default_factory=Counter)  # stored, but not SEND_OK
    seq: int = 0

    def body(self, tag: str) -> bytes:
        self.seq += 1
        return f"{tag}-{self.seq:07d}-".encode() + b"x" * 200


async def send_until(
    producer: Producer, ledger: Ledger, stop: asyncio.Event, tag: str, workers: int = 4
) -> None:
    """``workers`` senders in a loop until ``stop``; only SEND_OK goes into the ledger."""

    async def one() -> None:
        while not stop.is_set():
            body = ledger.body(tag)
            try:
                result = await producer.send(Message(TOPIC, body, keys=body[:16].decode()))
            except (RocketQError, OSError, TimeoutError):
                ledger.failed += 1
                await asyncio.sleep(0.02)
                continue
            if result.status is not SendStatus.SEND_OK:
                ledger.not_ok[result.status.name] += 1
                continue
            _, phy = decode_message_id(result.offset_msg_id)
            mq = result.message_queue
            ledger.acked.append(Ack(body, mq.queue_id, result.queue_offset, phy, mq.broker_name))

    await asyncio.gather(*(one() for _ in range(workers)))


def missing_in_store(store: Any, acks: list[Ack]) -> list[Ack]:
    """The acknowledged messages this store cannot serve at their queue offset, or whose
    body differs."""
    missing = []
    for ack in acks:
        got = store.get_message("check", TOPIC, ack.queue_id, ack.queue_offset, 1)
        if not got.message_buffers or decode_message(got.message_buffers[0]).body != ack.body:
            missing.append(ack)
    return missing


def open_stopped_store(conf: dict[str, str]) -> MessageStore:
    """The store a stopped broker left, opened (and recovered) for reading."""
    config, _ = StoreConfig.from_properties(
        {k: v for k, v in conf.items() if k in STORE_KEYS or k == "flushDiskType"},
        store_path_root_dir=conf["storePathRootDir"],
    )
    store = MessageStore(config)
    store.load()
    store.start()
    assert store.wait_for_dispatch(30)
    return store


def commitlog_bytes(commit_log_dir: str, end: int) -> bytes:
    """The log from its first file's offset to ``end`` (a slave that first linked late
    starts at the master's last file then, as in RocketMQ); see :func:`commitlog_start`."""
    names = sorted(os.listdir(commit_log_dir))
    data = b"".join(Path(commit_log_dir, n).read_bytes() for n in names)
    return data[: end - commitlog_start(commit_log_dir)]


def commitlog_start(commit_log_dir: str) -> int:
    names = sorted(os.listdir(commit_log_dir))
    return int(names[0]) if names else 0
