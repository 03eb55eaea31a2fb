"""The broker's controller client forgets a leader it cannot reach, so its next call asks the
group again instead of calling a dead address until the next metadata period."""

from __future__ import annotations

import asyncio
import socket

import pytest

from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, read, released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.timeout(30)
async def test_an_unreachable_leader_is_forgotten_after_the_failed_call() -> None:
    dead = f"127.0.0.1:{closed_port()}"
    client = ControllerClient([dead], timeout_s=2.0)
    client.leader_addr = dead
    try:
        with pytest.raises(ControllerRequestError) as failed:
            await client.get_replica_info("broker-a")
        assert failed.value.code == -1
        assert client.leader_addr == ""
    finally:
        await client.shutdown()


@pytest.mark.timeout(30)
async def test_a_connection_silent_for_the_heartbeat_timeout_is_replaced() -> None:
    """A connection that swallows every request (a stream that lost bytes mid-frame before a
    heal) is closed once nothing came back on it for ``close_silent_after_s``, so the next call
    connects again: a deposed master then hears of its successor (the heal timeout of
    RELIABILITY.md's partition runs). A single timeout does not close it."""
    accepted: list[asyncio.StreamWriter] = []

    async def black_hole(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)
        while await reader.read(65536):
            pass

    server = await asyncio.start_server(black_hole, "127.0.0.1", 0)
    addr = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
    client = ControllerClient([addr], timeout_s=0.3, close_silent_after_s=1.0)
    client.leader_addr = addr
    try:
        with pytest.raises(ControllerRequestError):
            await client.get_replica_info("broker-a")
        assert len(accepted) == 1
        for _ in range(4):  # 1.2 s of silence in all
            client.leader_addr = addr
            with pytest.raises(ControllerRequestError):
                await client.get_replica_info("broker-a")
        client.leader_addr = addr
        with pytest.raises(ControllerRequestError):
            await client.get_replica_info("broker-a")
        assert len(accepted) == 2  # the silent connection was replaced
    finally:
        await client.shutdown()
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()
