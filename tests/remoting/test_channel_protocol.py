"""ChannelProtocol's back-pressure: a connection reads no more while the peer reads no
replies or while too many of its answers wait, and reads again once they leave."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from functools import partial

import pytest

from rocketq.remoting.channel import DeferredReply, FastResult, RemotingChannel
from rocketq.remoting.channel_protocol import PAUSED_FOR_ANSWERS, PAUSED_FOR_WRITES
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codec import FrameDecoder, encode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing.wait import until

HELD = 2100
BIG = 2101
WAIT_S = 5.0
BIG_BODY = b"x" * (256 * 1024)


class Held:
    def __init__(self) -> None:
        self.held: list[DeferredReply] = []
        self.big = 0

    def hold(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        deferred = channel.defer(request)
        self.held.append(deferred)
        return deferred

    def big_reply(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        self.big += 1
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=BIG_BODY)

    def answer_as_frames(self, count: int) -> None:
        """Answer ``count`` held requests of one connection with their frames in one write, as
        a flush of the broker's sends does (``RemotingChannel.answer_frames``)."""
        answered, self.held = self.held[:count], self.held[count:]
        frames = b"".join(
            encode(
                RemotingCommand.create_response(
                    ResponseCode.SUCCESS, body=d.request.body
                ).response_to(d.request)
            )
            for d in answered
        )
        answered[0].channel.answer_frames(count, frames)

    def answer(self, count: int) -> None:
        answered, self.held = self.held[:count], self.held[count:]
        for deferred in answered:
            body = deferred.request.body
            deferred.answer(RemotingCommand.create_response(ResponseCode.SUCCESS, body=body))


@pytest.fixture
def procs() -> Held:
    return Held()


@pytest.fixture
async def server(procs: Held) -> AsyncIterator[RemotingServer]:
    srv = RemotingServer(max_deferred_answers=4)
    srv.register_fast_processor(HELD, procs.hold)
    srv.register_fast_processor(BIG, procs.big_reply)
    await srv.start("127.0.0.1", 0)
    try:
        yield srv
    finally:
        await srv.stop()


def _only_channel(srv: RemotingServer) -> RemotingChannel:
    (channel,) = srv.channels
    return channel


def _reading(channel: RemotingChannel) -> bool:
    return bool(channel._writer.transport.is_reading())


def _read_or_paused(procs: Held, sent: int, channel: RemotingChannel) -> bool:
    return procs.big == sent or not _reading(channel)


async def test_a_connection_with_too_many_answers_waiting_reads_no_more_until_half_leave(
    server: RemotingServer, procs: Held
) -> None:
    async with RemotingClient() as client:
        first = [
            asyncio.ensure_future(
                client.invoke(server.addr, RemotingCommand.create_request(HELD, {}, b"%d" % i), 5)
            )
            for i in range(4)
        ]
        assert await until(lambda: len(procs.held) == 4, WAIT_S)
        channel = _only_channel(server)
        assert channel._protocol.paused == PAUSED_FOR_ANSWERS
        assert not _reading(channel)
        late = asyncio.ensure_future(
            client.invoke(server.addr, RemotingCommand.create_request(HELD, {}, b"late"), 5)
        )
        procs.answer(1)  # 3 still wait: more than half of the bound
        assert (await first[0]).body == b"0"
        assert not _reading(channel)
        procs.answer(1)  # 2 wait: reading resumes and the late request is read
        assert await until(lambda: len(procs.held) == 3, WAIT_S)
        assert channel._protocol.paused == 0
        procs.answer(3)
        answered = await asyncio.gather(*first, late)
    assert [r.body for r in answered] == [b"0", b"1", b"2", b"3", b"late"]


async def test_answers_written_as_frames_resume_the_reading_once_half_leave(
    server: RemotingServer, procs: Held
) -> None:
    async with RemotingClient() as client:
        first = [
            asyncio.ensure_future(
                client.invoke(server.addr, RemotingCommand.create_request(HELD, {}, b"%d" % i), 5)
            )
            for i in range(4)
        ]
        assert await until(lambda: len(procs.held) == 4, WAIT_S)
        channel = _only_channel(server)
        assert channel._protocol.paused == PAUSED_FOR_ANSWERS
        late = asyncio.ensure_future(
            client.invoke(server.addr, RemotingCommand.create_request(HELD, {}, b"late"), 5)
        )
        procs.answer_as_frames(1)  # 3 still wait: more than half of the bound
        assert (await first[0]).body == b"0"
        assert not _reading(channel)
        procs.answer_as_frames(1)  # 2 wait: reading resumes and the late request is read
        assert await until(lambda: len(procs.held) == 3, WAIT_S)
        assert channel._protocol.paused == 0
        procs.answer_as_frames(3)
        answered = await asyncio.gather(*first, late)
    assert [r.body for r in answered] == [b"0", b"1", b"2", b"3", b"late"]


async def test_a_peer_that_reads_no_replies_stops_the_reading_of_its_requests(
    server: RemotingServer, procs: Held
) -> None:
    reader, writer = await asyncio.open_connection(server.host, server.port)
    try:
        requests = [RemotingCommand.create_request(BIG, {}) for _ in range(64)]
        channel: RemotingChannel | None = None
        for sent, command in enumerate(requests, 1):  # one a read, until the server pauses
            writer.write(encode(command))
            await writer.drain()
            if channel is None:
                assert await until(lambda: len(server.channels) == 1, WAIT_S)
                channel = _only_channel(server)
            assert await until(partial(_read_or_paused, procs, sent, channel), WAIT_S)
            if not _reading(channel):
                break
        assert channel is not None
        assert channel._protocol.paused == PAUSED_FOR_WRITES
        asked_while_paused = procs.big
        for command in requests[sent:]:
            writer.write(encode(command))  # not read while the replies wait
        await writer.drain()
        decoder = FrameDecoder()
        got: list[RemotingCommand] = []
        async with asyncio.timeout(WAIT_S * 4):
            while len(got) < len(requests):
                data = await reader.read(1 << 20)
                assert data, "the server closed the connection"
                got.extend(decoder.feed(data))
    finally:
        writer.close()
    assert asked_while_paused < len(requests)  # the rest were read once replies left
    assert procs.big == len(requests)
    assert [r.opaque for r in got] == [r.opaque for r in requests]
    assert all(r.body == BIG_BODY for r in got)
