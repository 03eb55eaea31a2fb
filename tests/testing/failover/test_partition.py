"""The partition plan: each controller reaches the others through proxies, each broker has its
own links, and a leader address in a metadata answer is moved onto the asking broker's link."""

from __future__ import annotations

import socket

import pytest

from rocketq.remoting.codec import decode, encode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.testing.failover.partition import ControllerLinks, leader_rewriter

CONTROLLERS = {"n0": "127.0.0.1:1", "n1": "127.0.0.1:2", "n2": "127.0.0.1:3"}


def answer(leader: str) -> bytes:
    response = RemotingCommand.create_response(0, ext_fields={"controllerLeaderAddress": leader})
    return encode(response)


def test_each_controller_names_the_others_by_their_proxies() -> None:
    links = ControllerLinks(CONTROLLERS)
    try:
        peers = dict(p.split("-", 1) for p in links.peers_of("n1").split(";"))
        assert peers["n1"] == "127.0.0.1:2"  # its own real address, which it binds
        assert peers["n0"] == links.raft["n1", "n0"].addr
        assert peers["n2"] == links.raft["n1", "n2"].addr
        assert links.aliases[links.raft["n1", "n0"].addr] == "127.0.0.1:1"
        assert links.aliases["127.0.0.1:3"] == "127.0.0.1:3"
    finally:
        links.close()


def test_a_broker_is_sent_to_the_leader_on_its_own_link() -> None:
    links = ControllerLinks(CONTROLLERS)
    try:
        addrs = links.broker_addrs("127.0.0.1:10911").split(";")
        mine = links.brokers["127.0.0.1:10911"]
        assert addrs == [mine[j].addr for j in ("n0", "n1", "n2")]
        rewrite = mine["n0"].rewrite
        assert rewrite is not None
        # the leader as n2 names itself, and as n0 names it (through n0's Raft proxy)
        for named in ("127.0.0.1:3", links.raft["n0", "n2"].addr):
            got = decode(rewrite(answer(named)))
            assert got.ext_fields["controllerLeaderAddress"] == mine["n2"].addr
        other = decode(rewrite(answer("127.0.0.1:99")))  # an unknown address passes unchanged
        assert other.ext_fields["controllerLeaderAddress"] == "127.0.0.1:99"
    finally:
        links.close()


def test_the_rewriter_leaves_requests_and_unreadable_frames_alone() -> None:
    rewrite = leader_rewriter({"a:1": "b:2"})
    request = encode(RemotingCommand.create_request(1005, {"controllerLeaderAddress": "a:1"}))
    assert rewrite(request) == request
    assert rewrite(b"\x00\x00\x00\x02zz") == b"\x00\x00\x00\x02zz"


@pytest.mark.timeout(30)
def test_a_moved_controller_is_reached_and_named_through_the_same_proxies() -> None:
    """A controller whose picked port was taken starts on another: its proxies forward there
    and its new address is rewritten onto each broker's link; only its own peers list
    changes, and a broker's links are filed under the address it bound."""
    server = socket.create_server(("127.0.0.1", 0))  # the controller on its fresh port
    server.settimeout(5)
    moved = f"127.0.0.1:{server.getsockname()[1]}"
    links = ControllerLinks(CONTROLLERS)
    try:
        addrs = links.broker_addrs("broker-a-0").split(";")  # before the broker has a port
        others = {i: links.peers_of(i) for i in ("n1", "n2")}
        links.move_controller("n0", moved)
        links.rename_broker("broker-a-0", "127.0.0.1:10911")
        mine = links.brokers["127.0.0.1:10911"]
        assert [mine[j].addr for j in ("n0", "n1", "n2")] == addrs  # the broker's conf holds
        assert {i: links.peers_of(i) for i in ("n1", "n2")} == others
        assert dict(p.split("-", 1) for p in links.peers_of("n0").split(";"))["n0"] == moved
        assert links.aliases[links.raft["n1", "n0"].addr] == moved
        frame = answer("127.0.0.1:99")  # a whole frame: a broker's link reads frames
        for proxy in (links.raft["n1", "n0"], links.raft["n2", "n0"], mine["n0"]):
            with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as client:
                conn, _ = server.accept()  # the proxy connected to the moved controller
                with conn:
                    conn.sendall(frame)
                    client.settimeout(5)
                    got = b""
                    while len(got) < len(frame) and (chunk := client.recv(len(frame))):
                        got += chunk
                    assert got == frame
        rewrite = mine["n1"].rewrite
        assert rewrite is not None
        named = decode(rewrite(answer(moved))).ext_fields["controllerLeaderAddress"]
        assert named == mine["n0"].addr  # n0 leading names itself by its new address
        stale = decode(rewrite(answer("127.0.0.1:1"))).ext_fields["controllerLeaderAddress"]
        assert stale == "127.0.0.1:1"  # its old address is no longer any controller's
    finally:
        links.close()
        server.close()
