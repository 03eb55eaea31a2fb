"""A master that goes silent (SIGSTOP) under our producer: three ``rocketq broker`` processes
in controller mode (issue 20's profile: 3 s heartbeat timeout, 500 ms heartbeats and scans)
around an in-process controller and name server. A send waiting on the paused master waits
out its timeout once; the next goes to the new master as soon as the route names it, not
after a second timeout on the same silent broker. Nothing acknowledged is lost."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from rocketq.client import Message, SendStatus
from rocketq.client.aio import Producer
from rocketq.common.message_id import decode_message_id
from rocketq.errors import RocketQError
from rocketq.testing.controller_mode import eventually
from rocketq.testing.controller_mode_group import run_controller_mode_group
from rocketq.testing.failover.checker import open_stopped_store

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(150)]

TOPIC = "TopicSilentMaster"
HEARTBEAT_TIMEOUT_S = 3.0  # controllerHeartBeatTimeoutMills of issue 20's profile
ISSUE_PROFILE = {
    "controllerHeartBeatTimeoutMills": str(int(HEARTBEAT_TIMEOUT_S * 1000)),
    "brokerHeartbeatInterval": "500",
    "haMaxTimeSlaveNotCatchup": "5000",
}
SEND_TIMEOUT_S = 3.0  # RocketMQ's sendMsgTimeout
# the target is heartbeat timeout + 1.5 s; two send timeouts on the silent master (what the
# producer did before) take 6 s and more; the margin is for a loaded machine
OUTAGE_BOUND_S = HEARTBEAT_TIMEOUT_S + 2.5


class Ledger:
    """Every SEND_OK: body -> the commitlog offset the broker named, and when it came."""

    def __init__(self) -> None:
        self.acked: dict[bytes, int] = {}
        self.acks: list[tuple[float, float, str]] = []  # (sent at, acked at, broker name)
        self.failed = 0
        self.seq = 0

    async def send(self, producer: Producer) -> None:
        self.seq += 1
        body = b"s-%06d-" % self.seq + b"x" * 100
        sent_at = time.monotonic()
        try:
            result = await producer.send(Message(topic=TOPIC, body=body))
        except RocketQError:
            self.failed += 1
            return
        assert result.status is SendStatus.SEND_OK
        self.acked[body] = decode_message_id(result.offset_msg_id)[1]
        self.acks.append((sent_at, time.monotonic(), result.message_queue.broker_name))

    async def load(self, producer: Producer, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.send(producer)

    def first_ack_sent_after(self, at: float) -> float | None:
        return next((acked for sent, acked, _ in self.acks if sent > at), None)


async def test_a_send_after_the_master_is_paused_goes_to_the_new_master_without_a_second_timeout(
    tmp_path: Path,
) -> None:
    ledger = Ledger()
    async with run_controller_mode_group(tmp_path, 3, ISSUE_PROFILE) as group:
        producer = Producer(
            "SilentMasterProducer",
            namesrv_addr=group.namesrv_addr,
            send_msg_timeout_s=SEND_TIMEOUT_S,
        )
        await producer.start()
        try:
            for _ in range(20):  # the route is known and the topic exists on the master
                await ledger.send(producer)
            assert len(ledger.acked) == 20, ledger.failed
            stop = asyncio.Event()
            loading = asyncio.create_task(ledger.load(producer, stop))
            await eventually(_acked_more_than(ledger, 40), 15)
            paused = group.at(group.master)
            paused_at = time.monotonic()
            group.pause(paused)  # mid-send: one waits on it now

            assert await eventually(_acked_after(ledger, paused_at), 30)
            outage_s = (ledger.first_ack_sent_after(paused_at) or 0.0) - paused_at
            new_master = await group.elected(1, 2)
            print(f"SIGSTOP of the master to the next SEND_OK: {outage_s:.2f} s")
            assert outage_s < OUTAGE_BOUND_S
            before = len(ledger.acked)
            await eventually(_acked_more_than(ledger, before + 20), 15)
            stop.set()
            await asyncio.wait_for(loading, 15)
        finally:
            await producer.shutdown()
        assert new_master != paused.addr
        group.resume(paused)  # deposed: it rejoins as a slave
        await group.stop()

    store = open_stopped_store(group.conf_at(new_master))
    try:  # nothing acknowledged is lost: each SEND_OK's offset holds its body on the new master
        for body, phy in ledger.acked.items():
            got = store.look_message_by_offset(phy)
            assert got is not None
            assert got.body == body
    finally:
        store.shutdown()


def _acked_more_than(ledger: Ledger, count: int) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return len(ledger.acked) > count

    return probe


def _acked_after(ledger: Ledger, at: float) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return ledger.first_ack_sent_after(at) is not None

    return probe
