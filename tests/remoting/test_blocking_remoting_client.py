"""BlockingRemotingClient against a real RemotingServer (calls run in worker threads)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from rocketq.errors import RemotingConnectError, RemotingTimeoutError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing import BlockingRemotingClient

WAIT = 5.0


@pytest.fixture
async def server() -> AsyncIterator[RemotingServer]:
    release = asyncio.Event()

    async def echo(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        return RemotingCommand.create_response(0, ext_fields=req.ext_fields, body=req.body)

    async def slow(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        await release.wait()
        return RemotingCommand.create_response(0, "late")

    async def ask_back(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        notify = RemotingCommand.create_request(
            RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {"consumerGroup": "G"}
        )
        answer = await channel.invoke(notify, WAIT)
        return RemotingCommand.create_response(0, answer.remark)

    srv = RemotingServer()
    srv.register_processor(1, echo)
    srv.register_processor(2, slow)
    srv.register_processor(3, ask_back)
    await srv.start()
    try:
        yield srv
    finally:
        release.set()
        await srv.stop()


async def test_blocking_invoke_returns_the_response(server: RemotingServer) -> None:
    with BlockingRemotingClient() as client:
        req = RemotingCommand.create_request(1, {"a": "b"}, b"body")
        resp = await asyncio.to_thread(client.invoke, server.addr, req, WAIT)
        assert (resp.opaque, resp.ext_fields, resp.body) == (req.opaque, {"a": "b"}, b"body")


async def test_blocking_timeout_then_late_response_is_discarded(server: RemotingServer) -> None:
    with BlockingRemotingClient() as client:
        slow = RemotingCommand.create_request(2)
        with pytest.raises(RemotingTimeoutError):
            await asyncio.to_thread(client.invoke, server.addr, slow, 0.2)
        req = RemotingCommand.create_request(1, {"n": "1"})
        resp = await asyncio.to_thread(client.invoke, server.addr, req, WAIT)
        assert resp.ext_fields == {"n": "1"}


async def test_blocking_client_answers_server_requests_while_waiting(
    server: RemotingServer,
) -> None:
    with BlockingRemotingClient() as client:
        client.register_processor(
            RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
            lambda req: RemotingCommand.create_response(0, req.ext_fields["consumerGroup"]),
        )
        resp = await asyncio.to_thread(
            client.invoke, server.addr, RemotingCommand.create_request(3), WAIT
        )
        assert resp.remark == "G"


async def test_blocking_unknown_code_and_name_server_selection(server: RemotingServer) -> None:
    with BlockingRemotingClient(namesrv_addrs=[server.addr]) as client:
        resp = await asyncio.to_thread(
            client.invoke, None, RemotingCommand.create_request(77), WAIT
        )
        assert resp.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
        await asyncio.to_thread(client.invoke_oneway, None, RemotingCommand.create_request(1))


async def test_blocking_reconnects_after_the_server_drops_it(server: RemotingServer) -> None:
    with BlockingRemotingClient() as client:
        req = RemotingCommand.create_request(1)
        await asyncio.to_thread(client.invoke, server.addr, req, WAIT)
        for channel in server.channels:
            channel.close()
        with pytest.raises(RemotingConnectError):
            await asyncio.to_thread(
                client.invoke, server.addr, RemotingCommand.create_request(1), WAIT
            )
        resp = await asyncio.to_thread(
            client.invoke, server.addr, RemotingCommand.create_request(1, {"x": "1"}), WAIT
        )
        assert resp.ext_fields == {"x": "1"}


def test_blocking_connect_failure_raises() -> None:
    with BlockingRemotingClient() as client, pytest.raises(RemotingConnectError):
        client.invoke("127.0.0.1:1", RemotingCommand.create_request(1), 1.0)
