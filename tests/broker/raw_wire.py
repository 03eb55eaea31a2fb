"""A raw connection to a test broker, for the tests that compare the native and Python
paths by the bytes of the frames: write requests, read reply frames by opaque, or a burst of
requests in one write (the broker tests' helpers)."""

from __future__ import annotations

import asyncio

from rocketq.remoting.codec import FrameDecoder, decode, encode
from rocketq.remoting.protocol.command import RemotingCommand

WAIT_S = 10.0


class Wire:
    """One connection: write frames, read frames by opaque (out of order ones kept)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.frames: dict[int, bytes] = {}

    def write(self, cmd: RemotingCommand) -> None:
        self.writer.write(encode(cmd))

    async def frame_of(self, opaque: int) -> bytes:
        async with asyncio.timeout(WAIT_S):
            while opaque not in self.frames:
                head = await self.reader.readexactly(4)
                frame = head + await self.reader.readexactly(int.from_bytes(head, "big"))
                self.frames[decode(frame).opaque] = frame
        return self.frames.pop(opaque)

    async def call(self, cmd: RemotingCommand) -> bytes:
        """Write ``cmd``; its reply frame's bytes."""
        self.write(cmd)
        return await self.frame_of(cmd.opaque)


async def raw_burst(
    addr: str, requests: list[RemotingCommand]
) -> tuple[bytes, list[RemotingCommand]]:
    """The requests in one write on a new connection; the bytes of their replies as read,
    and the replies in arrival order."""
    host, port = addr.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(b"".join(encode(r) for r in requests))
        decoder = FrameDecoder()
        raw = b""
        replies: list[RemotingCommand] = []
        async with asyncio.timeout(WAIT_S):
            while len(replies) < len(requests):
                data = await reader.read(65536)
                assert data, "the broker closed the connection"
                raw += data
                replies += decoder.feed(data)
        return raw, replies
    finally:
        writer.close()


async def one_write(addr: str, requests: list[RemotingCommand]) -> list[RemotingCommand]:
    """The requests in one write on a new connection; their replies in arrival order."""
    return (await raw_burst(addr, requests))[1]
