"""Metadata follows within 2 s across a kill -9 (beyond RocketMQ 5, whose 10 s poll loses a
topic created just before a switch and replays up to 10 s of consumption): two ``rocketq
broker`` processes in controller mode; offsets are committed on the master all along, a topic
is created and the master is killed with SIGKILL right after the answer. The slave that takes
over has the topic, and its committed offset is at least what was committed 2 s before the
kill."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.controller_mode.controller_client import ControllerClient
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import UpdateConsumerOffsetRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.controller_mode import (
    ReplicaWatch,
    broker_processes,
    eventually,
    start_processes,
)
from rocketq.testing.controller_wire import ControllerGroup
from rocketq.testing.wire import create_topic_request, request

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(90)]

BROKER_NAME = "broker-a"
TOPIC = "TopicOffsets"
GROUP = "GroupFollow"
REPLAY_BOUND_S = 2.0


class Committer:
    """UPDATE_CONSUMER_OFFSET to the master every 20 ms, offset = 1, 2, 3, ...; notes when
    each one was acknowledged."""

    def __init__(self, client: RemotingClient, addr: str) -> None:
        self.client, self.addr = client, addr
        self.acked: list[tuple[float, int]] = []

    async def run(self, stop: asyncio.Event) -> None:
        offset = 0
        while not stop.is_set():
            offset += 1
            header = UpdateConsumerOffsetRequestHeader(
                consumer_group=GROUP, topic=TOPIC, queue_id=0, commit_offset=offset
            )
            command = RemotingCommand.create_request(
                RequestCode.UPDATE_CONSUMER_OFFSET, header.to_ext_fields()
            )
            with contextlib.suppress(OSError, TimeoutError, ConnectionError):
                response = await self.client.invoke(self.addr, command, 2)
                if response.code == ResponseCode.SUCCESS:
                    self.acked.append((time.monotonic(), offset))
            await asyncio.sleep(0.02)  # the commit pace of a consumer, not a synchronization

    def acked_before(self, t: float) -> int:
        return max((o for at, o in self.acked if at <= t), default=0)


async def table(client: RemotingClient, addr: str, code: int) -> dict[str, Any]:
    response = await client.invoke(addr, request(code), 5)
    assert response.code == ResponseCode.SUCCESS, response.remark
    obj = fastjson.loads(bytes(response.body or b""))
    assert isinstance(obj, dict)
    return obj


async def test_a_topic_created_and_offsets_committed_survive_a_kill_right_after(
    tmp_path: Path,
) -> None:
    controllers = ControllerGroup(tmp_path / "controller", size=1)
    await controllers.start_all()
    client = RemotingClient()
    brokers: list[BrokerProcess] = []
    try:
        leader = await controllers.leader()
        ctl = ControllerClient([leader.addr])
        async with run_namesrv() as ns:
            brokers += broker_processes(tmp_path, ns.addr, [leader.addr], 2)
            await start_processes(brokers)
            watch = ReplicaWatch(ctl, BROKER_NAME)

            assert await eventually(lambda: watch.reaches(2, 1), 30), watch.view
            master = watch.view.master_address
            old = next(b for b in brokers if b.addr == master)
            created = await client.invoke(master, create_topic_request(TOPIC), 10)
            assert created.code == ResponseCode.SUCCESS, created.remark

            committer = Committer(client, master)
            stop = asyncio.Event()
            committing = asyncio.create_task(committer.run(stop))

            async def committed_for(seconds: float) -> bool:
                return (
                    bool(committer.acked)
                    and committer.acked[-1][0] - committer.acked[0][0] >= seconds
                )

            assert await eventually(lambda: committed_for(REPLAY_BOUND_S + 0.5), 15)
            answer = await client.invoke(master, create_topic_request("TopicJustBefore"), 10)
            old.kill()  # right after the answer
            killed_at = time.monotonic()
            stop.set()
            await asyncio.wait_for(committing, 5)
            assert answer.code == ResponseCode.SUCCESS, answer.remark

            assert await eventually(lambda: watch.reaches(1, 2), 15), watch.view
            new_master = watch.view.master_address
            assert new_master != master
            topics = await table(client, new_master, RequestCode.GET_ALL_TOPIC_CONFIG)
            assert "TopicJustBefore" in (topics.get("topicConfigTable") or {})
            offsets = await table(client, new_master, RequestCode.GET_ALL_CONSUMER_OFFSET)
            queues = (offsets.get("offsetTable") or {}).get(f"{TOPIC}@{GROUP}") or {}
            held = int(queues.get("0", queues.get(0, 0)))
            last = committer.acked[-1][1]
            print(f"last committed {last}, the new master holds {held}")
            assert held >= committer.acked_before(killed_at - REPLAY_BOUND_S)
            for b in brokers:
                b.stop()
            await ctl.shutdown()
    finally:
        for b in brokers:
            b.kill()
        await client.shutdown()
        await controllers.stop_all()
