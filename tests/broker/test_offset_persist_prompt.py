"""In controller mode a consumer's offset commit is persisted within 50 ms, not only every
flushConsumerOffsetInterval (5 s): a master whose slaves are down, killed -9 after answering
commits, keeps them (the fault sample replayed 3.4 s after a master restarted with offsets
from before its last commits and was then paused)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path

from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import UpdateConsumerOffsetRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.cluster import run_cluster

TOPIC = "OffsetPersistPrompt"
GROUP = "offset-persist-prompt"


def persisted(path: Path) -> int:
    if not path.exists():
        return -1
    table = fastjson.loads(path.read_text()).get("offsetTable", {})
    queues = table.get(f"{TOPIC}@{GROUP}", {})
    return int(queues.get(0, queues.get("0", -1)))


async def test_a_commit_is_on_disk_within_a_second_in_controller_mode(tmp_path: Path) -> None:
    async with run_cluster(tmp_path) as c:
        await c.create_topic(TOPIC, queues=1)
        broker = c.broker
        # the commit path as a controller-mode master runs it (its fencing aside)
        broker.config = dataclasses.replace(
            broker.config, enable_controller_mode=True, controller_addr="127.0.0.1:1"
        )
        header = UpdateConsumerOffsetRequestHeader(
            consumer_group=GROUP, topic=TOPIC, queue_id=0, commit_offset=42
        )
        request = RemotingCommand.create_request(
            RequestCode.UPDATE_CONSUMER_OFFSET, header.to_ext_fields()
        )
        response = await c.client.invoke(c.broker_addr, request, 5)
        assert response.code == ResponseCode.SUCCESS, response.remark
        path = tmp_path / "store" / "config" / "consumerOffset.json"
        deadline = time.monotonic() + 1.0  # well under the 5 s periodic persist
        while persisted(path) != 42:
            assert time.monotonic() < deadline, path.read_text() if path.exists() else "absent"
            await asyncio.sleep(0.02)
