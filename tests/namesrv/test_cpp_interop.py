"""The real C++ client (PyPI ``rocketmq`` 0.4.4) reads routes from our name server.

The producer runs in a subprocess; a RemotingServer stands in for the broker and answers
SEND_MESSAGE with string header values, as C++ needs.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import AsyncIterator

import pytest

from rocketq.namesrv import NamesrvController, start_namesrv
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import SendMessageRequestHeader, SendMessageResponseHeader
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from tests.namesrv.test_namesrv_server import register_request

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        importlib.util.find_spec("rocketmq") is None, reason="rocketmq wheel not installed"
    ),
]

PRODUCER = """
import sys
from rocketmq.client import Message, Producer
producer = Producer("PG_INTEROP", timeout=3000)
producer.set_namesrv_addr(sys.argv[1])
producer.start()
try:
    msg = Message("TopicInterop")
    msg.set_tags("TagA")
    msg.set_body("hello")
    result = producer.send_sync(msg)
    print(int(result.status), result.offset, flush=True)
finally:
    producer.shutdown()
"""


@pytest.fixture
async def namesrv() -> AsyncIterator[NamesrvController]:
    controller = await start_namesrv(0)
    try:
        yield controller
    finally:
        await controller.shutdown()


async def test_cpp_producer_sends_to_the_broker_our_route_names(
    namesrv: NamesrvController,
) -> None:
    sends: list[SendMessageRequestHeader] = []

    async def on_send(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        header = SendMessageRequestHeader.from_ext_fields(req.ext_fields)
        sends.append(header)
        reply = SendMessageResponseHeader(
            msg_id="7F00000100002A9F0000000000001A2B", queue_id=header.queue_id, queue_offset=42
        )
        return RemotingCommand.create_response(0, ext_fields=reply.to_ext_fields())

    async def ok(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    broker = RemotingServer()
    broker.register_processor(RequestCode.SEND_MESSAGE, on_send)
    broker.register_default_processor(ok)
    await broker.start()
    try:
        async with RemotingClient() as c:
            register = register_request({"TopicInterop": 4}, broker_addr=broker.addr)
            assert (await c.invoke(namesrv.addr, register, 5.0)).code == 0
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                PRODUCER,
                namesrv.addr,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), 60)
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
    finally:
        await broker.stop()
    assert out.decode().split() == ["0", "42"]
    assert sends
    assert sends[0].topic == "TopicInterop"
    assert 0 <= sends[0].queue_id < 4
