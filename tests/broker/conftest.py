"""Fixtures of the broker tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from rocketq.common import native_record
from rocketq.remoting import native_frames
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode


@pytest.fixture
async def server() -> AsyncIterator[RemotingServer]:
    srv = RemotingServer()
    arrived: asyncio.Queue[RemotingChannel] = asyncio.Queue()

    async def on_heartbeat(ctx: RemotingChannel, _: RemotingCommand) -> RemotingCommand:
        await arrived.put(ctx)
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    srv.register_processor(RequestCode.HEART_BEAT, on_heartbeat)
    srv.arrived = arrived  # type: ignore[attr-defined]
    await srv.start("127.0.0.1", 0)
    yield srv
    await srv.stop()


@pytest.fixture(autouse=True)
def _restore_native_paths() -> Iterator[None]:
    """A test that switches the native frames or records off (``use(False)``, as
    ``ROCKETQ_NATIVE=0`` does) leaves them as it found them."""
    frames, record = native_frames.FRAMES is not None, native_record.RECORD is not None
    yield
    native_frames.use(frames)
    native_record.use(record)
