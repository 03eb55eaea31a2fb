"""Fast processors: answered on the connection's reader, later, or in a task of their own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import pytest

from rocketq.remoting.channel import DeferredReply, FastResult, RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing.wait import until

NOW = 2000
LATER = 2001
WAITS = 2002
FAILS = 2003
HELD = 2004
WAIT_S = 5.0


class Processors:
    def __init__(self) -> None:
        self.held: list[DeferredReply] = []
        self.timeouts = 0

    def now(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=request.body)

    def later(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        deferred = channel.defer(request)
        response = RemotingCommand.create_response(ResponseCode.SUCCESS, body=request.body)
        asyncio.get_running_loop().call_soon(deferred.answer, response)
        return deferred

    def waits(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        return self._time_out()

    async def _time_out(self) -> RemotingCommand:
        never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(0.05):  # binds to this request's task, not the reader
                await never
        except TimeoutError:
            self.timeouts += 1
        return RemotingCommand.create_response(ResponseCode.SUCCESS, "timed out")

    def fails(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        raise RuntimeError("disk on fire")

    def hold(self, channel: RemotingChannel, request: RemotingCommand) -> FastResult:
        deferred = channel.defer(request)
        self.held.append(deferred)
        return deferred


@pytest.fixture
def procs() -> Processors:
    return Processors()


async def serve(procs: Processors, **kw: Any) -> RemotingServer:
    srv = RemotingServer(**kw)
    srv.register_fast_processor(NOW, procs.now)
    srv.register_fast_processor(LATER, procs.later)
    srv.register_fast_processor(WAITS, procs.waits)
    srv.register_fast_processor(FAILS, procs.fails)
    srv.register_fast_processor(HELD, procs.hold)
    await srv.start("127.0.0.1", 0)
    return srv


@pytest.fixture
async def server(procs: Processors) -> AsyncIterator[RemotingServer]:
    srv = await serve(procs)
    try:
        yield srv
    finally:
        await srv.stop()


def req(code: int, body: bytes = b"") -> RemotingCommand:
    return RemotingCommand.create_request(code, {}, body)


async def test_answers_now_and_later_reach_each_caller_with_its_own_body(
    server: RemotingServer,
) -> None:
    async with RemotingClient() as client:
        calls: list[Coroutine[Any, Any, RemotingCommand]] = [
            client.invoke(server.addr, req(NOW if i % 2 else LATER, b"%d" % i), WAIT_S)
            for i in range(64)
        ]
        responses = await asyncio.gather(*calls)
    assert [r.code for r in responses] == [ResponseCode.SUCCESS] * 64
    assert [r.body for r in responses] == [b"%d" % i for i in range(64)]


async def test_a_processor_that_must_wait_runs_in_its_own_task_and_its_timeout_spares_the_reader(
    server: RemotingServer, procs: Processors
) -> None:
    async with RemotingClient() as client:
        waited = await client.invoke(server.addr, req(WAITS), WAIT_S)
        after = await client.invoke(server.addr, req(NOW, b"still here"), WAIT_S)
    assert (waited.code, waited.remark, procs.timeouts) == (ResponseCode.SUCCESS, "timed out", 1)
    assert after.body == b"still here"  # the connection's reader was not cancelled


async def test_a_processor_that_raises_answers_system_error_with_the_reason(
    server: RemotingServer,
) -> None:
    async with RemotingClient() as client:
        r = await client.invoke(server.addr, req(FAILS), WAIT_S)
        ok = await client.invoke(server.addr, req(NOW, b"x"), WAIT_S)
    assert (r.code, r.remark) == (ResponseCode.SYSTEM_ERROR, "disk on fire")
    assert ok.body == b"x"


async def test_an_rpc_hook_refuses_a_fast_request_before_its_processor_runs(
    server: RemotingServer, procs: Processors
) -> None:
    def refuse_held(channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand | None:
        if request.code == HELD:
            return RemotingCommand.create_response(ResponseCode.NO_PERMISSION, "no")
        return None

    server.register_rpc_hook(refuse_held)
    async with RemotingClient() as client:
        r = await client.invoke(server.addr, req(HELD), WAIT_S)
    assert (r.code, r.remark) == (ResponseCode.NO_PERMISSION, "no")
    assert procs.held == []


async def test_answers_held_past_the_in_flight_limit_make_the_next_request_system_busy(
    procs: Processors,
) -> None:
    srv = await serve(procs, max_requests_in_flight=2)
    try:
        async with RemotingClient() as client:
            held = [
                asyncio.ensure_future(client.invoke(srv.addr, req(HELD), WAIT_S)) for _ in range(2)
            ]
            assert await until(lambda: len(procs.held) == 2, WAIT_S)
            busy = await client.invoke(srv.addr, req(NOW), WAIT_S)
            for deferred in procs.held:
                deferred.answer(RemotingCommand.create_response(ResponseCode.SUCCESS, "done"))
            answered = await asyncio.gather(*held)
            again = await client.invoke(srv.addr, req(NOW, b"y"), WAIT_S)
    finally:
        await srv.stop()
    assert busy.code == ResponseCode.SYSTEM_BUSY
    assert [r.remark for r in answered] == ["done", "done"]
    assert again.body == b"y"


async def test_a_oneway_fast_request_gets_no_response(
    server: RemotingServer, procs: Processors
) -> None:
    async with RemotingClient() as client:
        await client.invoke_oneway(server.addr, req(HELD))
        assert await until(lambda: len(procs.held) == 1, WAIT_S)
        procs.held[0].answer(RemotingCommand.create_response(ResponseCode.SUCCESS))
        r = await client.invoke(server.addr, req(NOW, b"z"), WAIT_S)
    assert r.body == b"z"  # the next response on the connection is this request's own


async def test_a_read_end_hook_answers_what_the_requests_of_a_read_left_pending(
    server: RemotingServer, procs: Processors
) -> None:
    def answer_held() -> None:
        held, procs.held = procs.held, []
        for deferred in held:
            deferred.answer(
                RemotingCommand.create_response(ResponseCode.SUCCESS, body=deferred.request.body)
            )

    server.add_read_end_hook(answer_held)
    async with RemotingClient() as client:
        responses = await asyncio.gather(
            *(client.invoke(server.addr, req(HELD, b"%d" % i), WAIT_S) for i in range(16))
        )
    assert [r.body for r in responses] == [b"%d" % i for i in range(16)]
