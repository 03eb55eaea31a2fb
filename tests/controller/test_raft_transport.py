"""RaftTransport: Raft's bytes over remoting between controllers, a code of rocketq's own, and
peers that are down cost a reconnect attempt per backoff, never a wait."""

from __future__ import annotations

import asyncio
import socket

import pytest

from rocketq.controller.raft import Message, MessageType
from rocketq.controller.raft_transport import RAFT_MESSAGE, RaftTransport
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.server import RemotingServer
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(30)


def heartbeat(to: int, sender: int, term: int = 1) -> Message:
    return Message(MessageType.HEARTBEAT, to, sender, term, commit=3, context=b"ctx")


def test_the_raft_code_is_none_of_rocketmqs_request_codes() -> None:
    assert RAFT_MESSAGE not in {int(code) for code in RequestCode}
    assert not 1001 <= RAFT_MESSAGE <= 1018  # controller codes, JRaft's internal RPCs
    assert not 50_000 <= RAFT_MESSAGE <= 51_999  # DLedger's own codes
    assert not 200_000 <= RAFT_MESSAGE <= 299_999  # RocketMQ 5's pop and lite codes


async def test_messages_arrive_decoded_in_order_on_the_peers_remoting_port() -> None:
    received: list[Message] = []
    server = RemotingServer()
    receiver = RaftTransport({1: "127.0.0.1:1", 2: "127.0.0.1:1"}, 2, received.append)
    receiver.register_to(server)
    port = await server.start("127.0.0.1", 0)
    sender = RaftTransport({1: "127.0.0.1:1", 2: f"127.0.0.1:{port}"}, 1, lambda m: None)
    sender.start()
    try:
        sent = [heartbeat(2, 1, term) for term in range(1, 21)]
        sender.send(sent)
        assert await until(lambda: len(received) == len(sent), 10.0)
        assert received == sent
    finally:
        await sender.stop()
        await receiver.stop()
        await server.stop()


async def test_a_peer_that_is_down_costs_one_attempt_per_backoff_and_never_blocks() -> None:
    # a port bound but not listening refuses connections, and no other socket can bind it
    # meanwhile (a port picked and released could be taken by a server that then answers)
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    transport = RaftTransport(
        {1: "127.0.0.1:1", 2: f"127.0.0.1:{dead.getsockname()[1]}"},
        1,
        lambda m: None,
        backoff_initial_s=5.0,
    )
    transport.start()
    try:
        transport.send([heartbeat(2, 1)])
        assert await until(lambda: transport.connect_failures(2) == 1, 10.0)
        loop = asyncio.get_running_loop()
        started = loop.time()
        for _ in range(1000):  # inside the backoff: dropped at once
            transport.send([heartbeat(2, 1)])
        assert loop.time() - started < 0.5
        await asyncio.sleep(0)  # let the sender task run, were anything queued
        assert transport.connect_failures(2) == 1
    finally:
        await transport.stop()
        dead.close()
