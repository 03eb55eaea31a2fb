"""The broker's controller client forgets a leader it cannot reach, so its next call asks the
group again instead of calling a dead address until the next metadata period."""

from __future__ import annotations

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
