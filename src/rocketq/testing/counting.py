"""A connection's transport with its write calls counted (how many syscalls a path costs)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class CountingTransport:
    """The connection's asyncio transport, with its write calls counted."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.transport.write(data)

    def writelines(self, frames: Iterable[bytes]) -> None:
        self.writes += 1
        self.transport.writelines(frames)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)
