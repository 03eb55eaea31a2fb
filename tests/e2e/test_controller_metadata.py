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

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import UpdateConsumerOffsetRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.controller_mode import eventually
from rocketq.testing.controller_mode_group import run_controller_mode_group
from rocketq.testing.wire import create_topic_request, request

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(90)]

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
    async with run_controller_mode_group(tmp_path, 2) as group:
        client, master = group.client, group.master
        await group.create_topic(TOPIC)

        committer = Committer(client, master)
        stop = asyncio.Event()
        committing = asyncio.create_task(committer.run(stop))

        async def committed_for(seconds: float) -> bool:
            acked = committer.acked
            return bool(acked) and acked[-1][0] - acked[0][0] >= seconds

        assert await eventually(lambda: committed_for(REPLAY_BOUND_S + 0.5), 15)
        answer = await client.invoke(master, create_topic_request("TopicJustBefore"), 10)
        group.at(master).kill()  # right after the answer
        killed_at = time.monotonic()
        stop.set()
        await asyncio.wait_for(committing, 5)
        assert answer.code == ResponseCode.SUCCESS, answer.remark

        new_master = await group.elected(1, 2)
        assert new_master != master
        topics = await table(client, new_master, RequestCode.GET_ALL_TOPIC_CONFIG)
        assert "TopicJustBefore" in (topics.get("topicConfigTable") or {})
        offsets = await table(client, new_master, RequestCode.GET_ALL_CONSUMER_OFFSET)
        queues = (offsets.get("offsetTable") or {}).get(f"{TOPIC}@{GROUP}") or {}
        held = int(queues.get("0", queues.get(0, 0)))
        last = committer.acked[-1][1]
        print(f"last committed {last}, the new master holds {held}")
        assert held >= committer.acked_before(killed_at - REPLAY_BOUND_S)
