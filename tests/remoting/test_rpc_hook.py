"""Server rpc hooks (RocketMQ's RPCHook.doBeforeRequest): a hook's response refuses the request
before any processor runs, a oneway refusal stays silent, a failing hook answers SYSTEM_ERROR."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing import until

GUARDED = 2000
OPEN = 2001
BROKEN = 2002
WAIT_S = 5.0


class Recorder:
    def __init__(self) -> None:
        self.processed: list[int] = []

    async def __call__(self, channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
        self.processed.append(request.code)
        return RemotingCommand.create_response(ResponseCode.SUCCESS)


def guard(channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand | None:
    if request.code == BROKEN:
        raise ValueError("hook broke")
    if request.code == GUARDED and request.ext_fields.get("pass") != "yes":
        return RemotingCommand.create_response(ResponseCode.NO_PERMISSION, "guarded")
    return None


@pytest.fixture
async def served() -> AsyncIterator[tuple[RemotingServer, Recorder]]:
    recorder = Recorder()
    server = RemotingServer()
    for code in (GUARDED, OPEN, BROKEN):
        server.register_processor(code, recorder)
    server.register_rpc_hook(guard)
    await server.start("127.0.0.1", 0)
    try:
        yield server, recorder
    finally:
        await server.stop()


async def test_a_hook_refusal_answers_for_the_processor_which_never_runs(
    served: tuple[RemotingServer, Recorder],
) -> None:
    server, recorder = served
    async with RemotingClient() as client:
        refused = await client.invoke(server.addr, RemotingCommand.create_request(GUARDED), WAIT_S)
        allowed = await client.invoke(
            server.addr, RemotingCommand.create_request(GUARDED, {"pass": "yes"}), WAIT_S
        )
        other = await client.invoke(server.addr, RemotingCommand.create_request(OPEN), WAIT_S)
    assert (refused.code, refused.remark) == (ResponseCode.NO_PERMISSION, "guarded")
    assert allowed.code == other.code == ResponseCode.SUCCESS
    assert recorder.processed == [GUARDED, OPEN]


async def test_a_refused_oneway_request_is_not_processed_and_the_connection_stays(
    served: tuple[RemotingServer, Recorder],
) -> None:
    server, recorder = served
    async with RemotingClient() as client:
        await client.invoke_oneway(server.addr, RemotingCommand.create_request(GUARDED))
        await client.invoke_oneway(server.addr, RemotingCommand.create_request(OPEN))
        assert await until(lambda: recorder.processed == [OPEN], WAIT_S)
        again = await client.invoke(server.addr, RemotingCommand.create_request(OPEN), WAIT_S)
    assert again.code == ResponseCode.SUCCESS
    assert recorder.processed == [OPEN, OPEN]


async def test_a_hook_that_raises_answers_system_error_and_skips_the_processor(
    served: tuple[RemotingServer, Recorder],
) -> None:
    server, recorder = served
    async with RemotingClient() as client:
        response = await client.invoke(server.addr, RemotingCommand.create_request(BROKEN), WAIT_S)
    assert response.code == ResponseCode.SYSTEM_ERROR
    assert response.remark == "hook broke"
    assert recorder.processed == []
