"""Partitions between the brokers and the controllers, and between the controllers, on
loopback: a :class:`~rocketq.testing.tcp_proxy.TcpProxy` on every link that a partition may
cut, silenced (no byte crosses, no connection closes) to partition it.

Theory of operation. Three kinds of link:

- Raft, controller i -> controller j: controller i's ``controllerDLegerPeers`` names every
  other peer j at a proxy R(i, j) in front of j's real address A(j) (its own entry stays its
  real address, which it binds). Raft identifies peers by id, so the peers lists may differ
  in addresses. A controller names the leader by its own list: R(i, L), or A(i) if it leads.
- Broker b -> controller j: b's ``controllerAddr`` lists a proxy P(b, j) in front of A(j). A
  RocketMQ 5 broker takes the leader's address from the metadata answer
  (``ReplicasManager.updateControllerMetadata`` stores ``getControllerLeaderAddress()``), not
  the address it asked, so P(b, j) rewrites ``controllerLeaderAddress`` in each answer from
  A(L) or R(i, L) to P(b, L): every request of b to the leader stays on b's own links.
- Controller -> broker role pushes go only to live brokers (``NotifyService``): a broker cut
  off from the controllers is no longer live for them, so that path needs no proxy.

The harness's own controller client (runner, producers) talks to A(j) directly and maps an
R(i, L) answer back to A(L) (:class:`AliasedControllerClient`).

Asymmetric partitions silence one direction of a link (``TcpProxy.silence(up=, down=)``):
:meth:`ControllerLinks.deafen_controller` drops what reaches a controller from the others
(their messages and the replies to its own) while its messages still reach them, and
``isolate_broker(..., up=False)`` drops only the controllers' answers to a broker whose
heartbeats still arrive. Clients (producers, consumers, the POP group) reach each broker
through a :class:`ClientLinks` proxy when a fault needs it, so clients can be cut from a
master that the controllers and its slaves still reach.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping

from rocketq.broker.controller_mode.controller_client import ControllerClient
from rocketq.remoting.codec import decode, encode
from rocketq.testing.tcp_proxy import TcpProxy

LEADER_FIELD = "controllerLeaderAddress"


def _target(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return host, int(port)


def leader_rewriter(aliases: Mapping[str, str]) -> Callable[[bytes], bytes]:
    """A frame rewriter that replaces a response's leader address by its alias."""

    def rewrite(frame: bytes) -> bytes:
        with contextlib.suppress(Exception):  # a frame it cannot read passes unchanged
            command = decode(frame)
            leader = command.ext_fields.get(LEADER_FIELD, "")
            if command.is_response and leader in aliases:
                command.ext_fields[LEADER_FIELD] = aliases[leader]
                return encode(command)
        return frame

    return rewrite


class ControllerLinks:
    """Every proxied link of a controller group whose real addresses are ``controllers``
    (peer id -> address); broker links are made on demand by :meth:`broker_addrs`."""

    def __init__(self, controllers: Mapping[str, str]) -> None:
        self.controllers = dict(controllers)
        self.raft: dict[tuple[str, str], TcpProxy] = {
            (i, j): TcpProxy(_target(a_j))
            for i in controllers
            for j, a_j in controllers.items()
            if i != j
        }
        self.brokers: dict[str, dict[str, TcpProxy]] = {}
        #: per broker: every address a controller may name the leader by -> its proxy there
        self._leader_maps: dict[str, dict[str, str]] = {}

    def peers_of(self, self_id: str) -> str:
        """``controllerDLegerPeers`` for controller ``self_id``: the others behind proxies."""
        return ";".join(
            f"{j}-{a_j if j == self_id else self.raft[self_id, j].addr}"
            for j, a_j in self.controllers.items()
        )

    @property
    def aliases(self) -> dict[str, str]:
        """Every address a controller may name the leader by -> its real address."""
        out = {a: a for a in self.controllers.values()}
        out.update({p.addr: self.controllers[j] for (_, j), p in self.raft.items()})
        return out

    def broker_addrs(self, broker: str) -> str:
        """``controllerAddr`` for broker ``broker`` (its listen address, or a key that
        :meth:`rename_broker` replaces by it once the broker has bound its port): its own
        proxies."""
        proxies = self.brokers.get(broker)
        if proxies is None:
            mine: dict[str, str] = {}
            proxies = {}
            for j, a_j in self.controllers.items():
                proxies[j] = TcpProxy(_target(a_j), leader_rewriter(mine))
                mine[a_j] = proxies[j].addr
            for (_, j), raft in self.raft.items():
                mine[raft.addr] = proxies[j].addr
            self.brokers[broker] = proxies
            self._leader_maps[broker] = mine
        return ";".join(p.addr for p in proxies.values())

    def rename_broker(self, key: str, broker: str) -> None:
        """The links made by ``broker_addrs(key)`` are the broker ``broker``'s (its address,
        known once it has started on a port of its own)."""
        self.brokers[broker] = self.brokers.pop(key)
        self._leader_maps[broker] = self._leader_maps.pop(key)

    def move_controller(self, peer: str, addr: str) -> None:
        """Controller ``peer`` listens on ``addr`` now (its picked port was taken before it
        bound it): every proxy in front of it forwards there, every broker link names it as
        the leader by its new address. Only ``peers_of(peer)`` changes: the others name it by
        their proxies, the brokers by theirs."""
        old = self.controllers[peer]
        self.controllers[peer] = addr
        for (_, j), raft in self.raft.items():
            if j == peer:
                raft.target = _target(addr)
        for broker, proxies in self.brokers.items():
            proxies[peer].target = _target(addr)
            mine = self._leader_maps[broker]
            mine[addr] = mine.pop(old)

    def isolate_broker(
        self, broker: str, keep: Iterable[str] = (), *, up: bool = True, down: bool = True
    ) -> None:
        """Silence the broker's links to every controller but ``keep`` (``up``: its requests,
        ``down``: the answers)."""
        for j, proxy in self.brokers[broker].items():
            if j not in keep:
                proxy.silence(up=up, down=down)

    def deafen_controller(self, peer: str) -> None:
        """One way only: ``peer`` hears no other controller (neither their messages nor the
        replies to its own), while what it sends still reaches them."""
        for (i, j), proxy in self.raft.items():
            if j == peer:
                proxy.silence(up=True, down=False)
            elif i == peer:
                proxy.silence(up=False, down=True)

    def isolate_controller(self, peer: str) -> None:
        """Silence Raft both ways between ``peer`` and every other controller."""
        for (i, j), proxy in self.raft.items():
            if peer in (i, j):
                proxy.silence()

    def heal(self) -> None:
        for proxy in self._all():
            if proxy.silent:
                proxy.restore()

    def close(self) -> None:
        for proxy in self._all():
            proxy.close()

    def _all(self) -> list[TcpProxy]:
        out = list(self.raft.values())
        for proxies in self.brokers.values():
            out += proxies.values()
        return out


class AliasedControllerClient(ControllerClient):
    """The harness's controller client: the real addresses, a leader named through a Raft
    proxy mapped back to its real address."""

    def __init__(self, controller_addrs: list[str], aliases: Mapping[str, str]) -> None:
        super().__init__(controller_addrs)
        self.aliases = dict(aliases)

    async def find_leader(self) -> str:
        leader = await super().find_leader()
        self.leader_addr = self.aliases.get(leader, leader)
        return self.leader_addr


class ClientLinks:
    """The clients' links to the brokers: one proxy per broker address (its ``via``), so a
    partition can cut the clients from a broker alone."""

    def __init__(self) -> None:
        self.proxies: dict[str, TcpProxy] = {}

    def add(self, broker: str) -> None:
        self.proxies[broker] = TcpProxy(_target(broker))

    @property
    def via(self) -> dict[str, str]:
        """broker address -> the address clients reach it by."""
        return {broker: proxy.addr for broker, proxy in self.proxies.items()}

    def isolate(self, broker: str) -> None:
        self.proxies[broker].silence()

    def heal(self) -> None:
        for proxy in self.proxies.values():
            if proxy.silent:
                proxy.restore()

    def close(self) -> None:
        for proxy in self.proxies.values():
            proxy.close()
