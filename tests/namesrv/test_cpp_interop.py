"""The real C++ client (PyPI ``rocketmq`` 0.4.4) reads routes from our name server.

The producer runs in a subprocess (its own HOME, for the client's logs) and knows only the
name server's address; it sends to the rocketq broker the route names, on 127.0.0.1 port 0.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from rocketq.common.message_decoder import decode_message
from rocketq.common.topic_config import TopicConfig
from rocketq.testing import run_broker, run_namesrv

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        importlib.util.find_spec("rocketmq") is None, reason="rocketmq wheel not installed"
    ),
]

TOPIC = "TopicInterop"
PRODUCER = f"""
import sys
from rocketmq.client import Message, Producer
producer = Producer("PG_INTEROP", timeout=3000)
producer.set_namesrv_addr(sys.argv[1])
producer.start()
try:
    msg = Message("{TOPIC}")
    msg.set_tags("TagA")
    msg.set_body("hello")
    result = producer.send_sync(msg)
    print(int(result.status), result.offset, result.msg_id, flush=True)
finally:
    producer.shutdown()
"""


async def run_producer(namesrv_addr: str, home: Path) -> list[str]:
    """The producer's output line: status, queue offset, msg id."""
    home.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 -- one mkdir before the driver starts
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        PRODUCER,
        namesrv_addr,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=dict(os.environ, HOME=str(home)),
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return out.decode().split()


async def test_cpp_producer_sends_to_the_broker_our_route_names(tmp_path: Path) -> None:
    async with (
        run_namesrv() as ns,
        run_broker(tmp_path / "store", namesrv_addr=ns.addr) as broker,
    ):
        broker.topic_config_manager.update_topic_config(
            TopicConfig(topic_name=TOPIC, read_queue_nums=4, write_queue_nums=4)
        )
        await broker.register_broker_all()
        status, offset, msg_id = await run_producer(ns.addr, tmp_path / "home")
        store = broker.message_store
        assert await asyncio.to_thread(store.wait_for_dispatch, 5.0)
        found = [
            decode_message(buf)
            for queue_id in range(4)
            for buf in store.get_message("check", TOPIC, queue_id, 0, 10).message_buffers
        ]
    assert (status, offset) == ("0", "0")
    [stored] = found
    assert stored.body == b"hello"
    assert stored.tags == "TagA"
    assert stored.uniq_key == msg_id
    assert 0 <= stored.queue_id < 4
