"""A real RemotingServer and clients, giving tests broker-side channels of real connections."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer


@dataclass
class Link:
    """A real client connection and the broker-side channel it arrived on."""

    client: RemotingClient
    channel: RemotingChannel
    notified: asyncio.Queue[RemotingCommand] = field(default_factory=asyncio.Queue)


@dataclass
class Clock:
    ms: int = 1_000_000

    def __call__(self) -> int:
        return self.ms


async def connect(srv: RemotingServer) -> Link:
    client = RemotingClient()
    notified: asyncio.Queue[RemotingCommand] = asyncio.Queue()

    async def on_notify(_: RemotingChannel, cmd: RemotingCommand) -> None:
        await notified.put(cmd)

    client.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, on_notify)
    await client.invoke(srv.addr, RemotingCommand.create_request(RequestCode.HEART_BEAT), 3.0)
    channel = await asyncio.wait_for(srv.arrived.get(), 3.0)  # type: ignore[attr-defined]
    return Link(client, channel, notified)
