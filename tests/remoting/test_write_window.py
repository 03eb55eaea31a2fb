"""The write window (channel_writer.FrameWriter._write): a client's request leaves at once;
answers given while a read is served leave together at the read's end."""

from __future__ import annotations

import asyncio

import pytest

from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing.counting import CountingTransport

pytestmark = pytest.mark.timeout(30)

ECHO = 1000
WAIT = 5.0


async def test_a_request_leaves_at_once_not_at_the_iteration_s_end() -> None:
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
            # as a consumer acks (invokeAsync) and pops on: each request is on the wire
            # before the task goes on, so the broker can start on it while the client works
            acked = await client.invoke_async(srv.addr, ack, WAIT)
            assert counting.writes == 1
            pop = RemotingCommand.create_request(ECHO, {"n": "pop"})
            popped = await client.invoke(srv.addr, pop, WAIT)
            answers = [await asyncio.wait_for(acked, WAIT), popped]
            assert [a.ext_fields for a in answers] == [{"n": "ack"}, {"n": "pop"}]
            assert answers[0].body == b"a" * 300
            assert counting.writes == 2
    finally:
        await srv.stop()
