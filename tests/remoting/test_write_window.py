"""The write window (channel_writer.FrameWriter._write): the requests a client writes in one
loop iteration leave in one write (a consumer's ack and its next pop together), and each is
answered as before."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

import pytest

from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode

pytestmark = pytest.mark.timeout(30)

ECHO = 1000
WAIT = 5.0


class CountingTransport:
    """The connection's asyncio transport, with its write calls counted."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.transport.write(data)

    def writelines(self, frames: Iterable[bytes]) -> None:
        self.writes += 1
        self.transport.writelines(frames)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


async def test_the_requests_of_one_iteration_leave_in_one_write() -> None:
    srv = RemotingServer()

    def echo(_: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, ext_fields=req.ext_fields, body=req.body
        )

    srv.register_fast_processor(ECHO, echo)
    await srv.start("127.0.0.1", 0)
    try:
        async with RemotingClient() as client:
            channel = await client.get_channel(srv.addr)
            counting = CountingTransport(channel._writer.transport)
            channel._writer.transport = counting  # type: ignore[assignment]
            ack = RemotingCommand.create_request(ECHO, {"n": "ack"}, body=b"a" * 300)
            pop = RemotingCommand.create_request(ECHO, {"n": "pop"})
            # as a consumer acks (invokeAsync) and pops on, in one step of its task
            acked = await client.invoke_async(srv.addr, ack, WAIT)
            popped = await client.invoke(srv.addr, pop, WAIT)
            answers = [await asyncio.wait_for(acked, WAIT), popped]
            assert [a.ext_fields for a in answers] == [{"n": "ack"}, {"n": "pop"}]
            assert answers[0].body == b"a" * 300
            assert counting.writes == 1
            # a lone request is written too (at the iteration's end)
            alone = RemotingCommand.create_request(ECHO, {"n": "alone"})
            answer = await client.invoke(srv.addr, alone, WAIT)
            assert answer.ext_fields == {"n": "alone"}
            assert counting.writes == 2
    finally:
        await srv.stop()
