"""The client's per-request path: a future and a timer per sync invoke, both gone however
the wait ends (answer, timeout, cancellation), and the connection unharmed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from rocketq.errors import RemotingConnectError, RemotingTimeoutError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing.wait import until

ECHO, HELD = 1000, 1001
WAIT = 5.0


@pytest.fixture
async def served() -> AsyncIterator[tuple[RemotingServer, asyncio.Event]]:
    release = asyncio.Event()
    srv = RemotingServer()

    async def echo(_: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        return RemotingCommand.create_response(ResponseCode.SUCCESS, ext_fields=req.ext_fields)

    async def held(_: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        await release.wait()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, "late")

    srv.register_processor(ECHO, echo)
    srv.register_processor(HELD, held)
    await srv.start("127.0.0.1", 0)
    try:
        yield srv, release
    finally:
        release.set()
        await srv.stop()


async def test_a_cancelled_invoke_leaves_nothing_pending_and_its_late_answer_is_dropped(
    served: tuple[RemotingServer, asyncio.Event],
) -> None:
    srv, release = served
    async with RemotingClient() as client:
        waiting = asyncio.ensure_future(
            client.invoke(srv.addr, RemotingCommand.create_request(HELD), WAIT)
        )
        channel = await client.get_channel(srv.addr)
        assert await until(lambda: channel.pending_request_count > 0, WAIT)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert channel.pending_request_count == 0
        release.set()  # the late answer finds no waiter
        answer = await client.invoke(
            srv.addr, RemotingCommand.create_request(ECHO, {"n": "1"}), WAIT
        )
        assert answer.ext_fields == {"n": "1"}
        assert not channel.is_closed


async def test_a_timed_out_invoke_names_the_request_and_the_next_one_is_answered(
    served: tuple[RemotingServer, asyncio.Event],
) -> None:
    srv, _ = served
    async with RemotingClient() as client:
        req = RemotingCommand.create_request(HELD)
        with pytest.raises(RemotingTimeoutError, match=f"code {HELD}, opaque {req.opaque}"):
            await client.invoke(srv.addr, req, 0.2)
        channel = await client.get_channel(srv.addr)
        assert channel.pending_request_count == 0
        for n in range(50):  # answered requests leave no timer that could fail a later one
            fields = {"n": str(n)}
            answer = await client.invoke(
                srv.addr, RemotingCommand.create_request(ECHO, fields), 0.5
            )
            assert answer.ext_fields == fields
        assert channel.pending_request_count == 0


class Outcomes:
    """A response handler that records what it got and whether a task was running it."""

    def __init__(self) -> None:
        self.got: list[RemotingCommand | BaseException] = []
        self.in_task: list[bool] = []
        self.arrived = asyncio.Event()

    def __call__(self, outcome: RemotingCommand | BaseException) -> None:
        self.got.append(outcome)
        self.in_task.append(asyncio.current_task() is not None)
        self.arrived.set()


async def test_a_callback_request_is_answered_on_the_reader_and_leaves_nothing_pending(
    served: tuple[RemotingServer, asyncio.Event],
) -> None:
    srv, _ = served
    async with RemotingClient() as client:
        channel = await client.get_channel(srv.addr)
        outcomes = Outcomes()
        channel.invoke_callback(RemotingCommand.create_request(ECHO, {"n": "7"}), WAIT, outcomes)
        await asyncio.wait_for(outcomes.arrived.wait(), WAIT)
        (answer,) = outcomes.got
        assert isinstance(answer, RemotingCommand)
        assert answer.ext_fields == {"n": "7"}
        assert outcomes.in_task == [False]  # run inside the read, not by a woken task
        assert channel.pending_request_count == 0


async def test_a_timed_out_callback_request_gets_invokes_error_and_its_late_answer_is_dropped(
    served: tuple[RemotingServer, asyncio.Event],
) -> None:
    srv, release = served
    async with RemotingClient() as client:
        channel = await client.get_channel(srv.addr)
        outcomes = Outcomes()
        req = RemotingCommand.create_request(HELD)
        channel.invoke_callback(req, 0.2, outcomes)
        await asyncio.wait_for(outcomes.arrived.wait(), WAIT)
        (error,) = outcomes.got
        assert isinstance(error, RemotingTimeoutError)
        assert f"code {HELD}, opaque {req.opaque}" in str(error)
        assert channel.pending_request_count == 0
        release.set()  # the late answer finds no entry and runs nothing
        answer = await client.invoke(srv.addr, RemotingCommand.create_request(ECHO), WAIT)
        assert answer.code == ResponseCode.SUCCESS
        assert len(outcomes.got) == 1


async def test_a_cancelled_callback_request_runs_nothing_and_a_close_fails_the_others(
    served: tuple[RemotingServer, asyncio.Event],
) -> None:
    srv, release = served
    async with RemotingClient() as client:
        channel = await client.get_channel(srv.addr)
        cancelled, failed = Outcomes(), Outcomes()
        slot = channel.invoke_callback(RemotingCommand.create_request(HELD), WAIT, cancelled)
        channel.invoke_callback(RemotingCommand.create_request(HELD), WAIT, failed)
        assert channel.pending_request_count == 2
        slot.cancel()
        assert channel.pending_request_count == 1
        channel.close()
        (error,) = failed.got
        assert isinstance(error, RemotingConnectError)
        assert cancelled.got == []
        assert channel.pending_request_count == 0
        with pytest.raises(RemotingConnectError):  # no entry left behind by a closed channel
            channel.invoke_callback(RemotingCommand.create_request(ECHO), WAIT, failed)
        assert channel.pending_request_count == 0
        release.set()
