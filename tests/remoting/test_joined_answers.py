"""An answer written with ``write_joined`` while answers are held (``hold_answers``, a put
flush): it waits for its connection's answers still to come and leaves in their write, or
when the hold is released."""

from __future__ import annotations

import asyncio

import pytest

from rocketq.remoting.channel import DeferredReply, RemotingChannel
from rocketq.remoting.channel_writer import hold_answers, release_answers
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing.counting import CountingTransport
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(30)

LATER = 1001  # answered later (as a send in a put flush)
HELD = 1002  # no answer now (as a held pull)
WAIT = 5.0


async def _serve() -> tuple[RemotingServer, list[DeferredReply], list[RemotingCommand]]:
    srv = RemotingServer()
    deferred: list[DeferredReply] = []
    held: list[RemotingCommand] = []

    def later(channel: RemotingChannel, req: RemotingCommand) -> DeferredReply:
        deferred.append(channel.defer(req))
        return deferred[-1]

    def hold(_: RemotingChannel, req: RemotingCommand) -> None:
        held.append(req)

    srv.register_fast_processor(LATER, later)
    srv.register_fast_processor(HELD, hold)
    await srv.start("127.0.0.1", 0)
    return srv, deferred, held


def _ok(name: str) -> RemotingCommand:
    return RemotingCommand.create_response(ResponseCode.SUCCESS, ext_fields={"n": name})


async def test_a_joined_answer_leaves_with_its_connection_s_next_answer() -> None:
    srv, deferred, held = await _serve()
    try:
        async with RemotingClient() as client:
            pulled = asyncio.ensure_future(
                client.invoke(srv.addr, RemotingCommand.create_request(HELD, {}), WAIT)
            )
            sent = asyncio.ensure_future(
                client.invoke(srv.addr, RemotingCommand.create_request(LATER, {}), WAIT)
            )
            assert await until(lambda: bool(deferred and held), WAIT)
            (channel,) = srv.channels
            counting = CountingTransport(channel._writer.transport)
            channel._writer.transport = counting  # type: ignore[assignment]
            assert hold_answers()
            assert not hold_answers()  # already holding
            try:
                channel.write_joined(held[0], _ok("pull"))
                assert counting.writes == 0  # waits: this connection has an answer to come
                deferred[0].answer(_ok("send"))
                assert counting.writes == 0  # a burst's answer: the hold's end writes it
            finally:
                release_answers()
            assert counting.writes == 1
            answers = await asyncio.wait_for(asyncio.gather(pulled, sent), WAIT)
            assert [a.ext_fields for a in answers] == [{"n": "pull"}, {"n": "send"}]
    finally:
        await srv.stop()


async def test_a_joined_answer_leaves_at_once_without_a_hold_or_an_answer_to_come() -> None:
    srv, _deferred, held = await _serve()
    try:
        async with RemotingClient() as client:
            pulls = [
                asyncio.ensure_future(
                    client.invoke(srv.addr, RemotingCommand.create_request(HELD, {}), WAIT)
                )
                for _ in range(2)
            ]
            assert await until(lambda: len(held) == 2, WAIT)
            (channel,) = srv.channels
            counting = CountingTransport(channel._writer.transport)
            channel._writer.transport = counting  # type: ignore[assignment]
            channel.write_joined(held[0], _ok("first"))  # no hold
            assert counting.writes == 1
            await asyncio.sleep(0)  # the write window it opened ends
            assert hold_answers()
            try:
                channel.write_joined(held[1], _ok("second"))  # nothing deferred on it
                assert counting.writes == 2
            finally:
                release_answers()
            answers = await asyncio.wait_for(asyncio.gather(*pulls), WAIT)
            assert [a.ext_fields for a in answers] == [{"n": "first"}, {"n": "second"}]
    finally:
        await srv.stop()
