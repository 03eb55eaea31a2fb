"""A controller group's picked ports can be taken before its servers bind them: the first
start picks fresh ones for the whole group, a restart waits a bounded while for its own."""

from __future__ import annotations

import asyncio
import errno
import socket
from pathlib import Path

import pytest

from rocketq.testing import controller_group
from rocketq.testing.controller_group import Group

pytestmark = pytest.mark.timeout(60)


def port_of(group: Group, self_id: str) -> int:
    peers = dict(p.split("-", 1) for p in group.peers.split(";"))
    return int(peers[self_id].rsplit(":", 1)[1])


def hold(port: int) -> socket.socket:
    """A listening socket on ``port``, as another server that took it would hold it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


async def test_start_all_picks_fresh_ports_when_a_picked_one_is_taken(tmp_path: Path) -> None:
    group = Group(tmp_path)
    taken = port_of(group, "n1")
    try:
        with hold(taken):
            await group.start_all()
            assert taken not in {port_of(group, f"n{i}") for i in range(3)}
            assert len(group.servers) == 3
            assert (await group.leader()).self_id in group.servers
    finally:
        await group.stop_all()


async def test_a_restart_waits_for_its_held_port(tmp_path: Path) -> None:
    group = Group(tmp_path)
    try:
        await group.start_all()
        port = port_of(group, "n2")
        await group.stop("n2")
        squatter = hold(port)
        asyncio.get_running_loop().call_later(1.0, squatter.close)
        try:
            with pytest.raises(OSError) as refused:  # held now: the one-shot start fails
                await group.start_once("n2")
            assert refused.value.errno == errno.EADDRINUSE
            await group.start("n2")  # retried until the holder lets go
        finally:
            squatter.close()
        assert port_of(group, "n2") == port
        assert (await group.leader()).self_id in group.servers
    finally:
        await group.stop_all()


async def test_a_port_held_for_good_fails_the_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(controller_group, "START_ATTEMPTS", 2)
    group = Group(tmp_path)
    try:
        await group.start_all()
        port = port_of(group, "n0")
        await group.stop("n0")
        with hold(port), pytest.raises(OSError) as refused:
            await group.start("n0")
        assert refused.value.errno == errno.EADDRINUSE
        assert "n0" not in group.servers
    finally:
        await group.stop_all()
