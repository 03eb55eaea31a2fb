"""PopLongPollingService's hold of parked pops over a real connection: what a connection
parks is dropped with it, and the pops answered leave nothing behind on the connection."""

from __future__ import annotations

import asyncio

from rocketq.broker.config import BrokerConfig
from rocketq.broker.pop.pop_long_polling import PollingResult, PopLongPollingService, PopRequest
from rocketq.remoting.server import RemotingServer
from tests.broker.channel_pair import Link, connect


def parked(link: Link, woken: asyncio.Queue[PopRequest]) -> PopRequest:
    async def wakeup() -> None:
        await woken.put(req)

    req = PopRequest(link.channel, "T", "g", 0, timeout_ms=15_000, wakeup=wakeup)
    return req


async def test_a_connection_s_parked_pops_leave_nothing_behind_once_answered(
    server: RemotingServer,
) -> None:
    """A consumer parks a pop per empty receive for as long as it lives: the pops answered
    must not stay referenced by its connection (a close listener per pop kept each one until
    the connection closed)."""
    service = PopLongPollingService(BrokerConfig())
    woken: asyncio.Queue[PopRequest] = asyncio.Queue()
    link = await connect(server)
    try:
        listeners = len(link.channel._close_listeners)
        for _ in range(50):
            req = parked(link, woken)
            assert service.polling(req) is PollingResult.POLLING_SUC
            assert service.notify_message_arriving("T", 0) == 1
            assert await asyncio.wait_for(woken.get(), 3.0) is req
        assert len(link.channel._close_listeners) <= listeners + 1
        # the connection's close still drops what it parked
        assert service.polling(parked(link, woken)) is PollingResult.POLLING_SUC
        assert service.parked_count == 1
        link.channel.close()
        assert service.parked_count == 0
    finally:
        await service.shutdown()
        await link.client.shutdown()
