"""``RaftTransport``: Raft messages between controllers over our remoting.

The address of each peer in ``controllerDLegerPeers`` is both its Raft port and its controller
remoting address, as in RocketMQ's DLedger controller (``DLedgerController`` serves the
controller's requests on the DLedger server's remoting port). A Raft message is a oneway
request with code ``RAFT_MESSAGE`` whose body is the Raft codec's bytes
(``rocketq.controller.raft.codec``); it never collides with a RocketMQ request code
(docs/controller.md). Raft tolerates loss, so sending never waits on a peer:

- ``send`` queues a message for its peer's sender task and returns at once; a full queue
  drops its oldest message (a later heartbeat or append supersedes it).
- A peer that cannot be reached costs one connect attempt, then its messages are dropped
  until a backoff (doubling from ``backoff_initial_s`` up to ``backoff_max_s``) has passed.
- Received bytes go through the codec only (no pickle, no eval); bytes that do not decode
  are logged with the peer's address and close that connection only.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping

from rocketq.controller.raft import Message, MessageDecodeError, decode_message, encode_message
from rocketq.errors import RemotingError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer

log = logging.getLogger(__name__)

RAFT_MESSAGE = 77_001
"""rocketq's own request code for controller-to-controller Raft traffic (RocketMQ's codes stop
at 200151 and DLedger's at 51005; this one is in neither range)."""

QUEUE_LIMIT = 1024


class _PeerSender:
    """One peer's queue and the task that drains it over one connection."""

    def __init__(self, transport: RaftTransport, peer_id: int, addr: str) -> None:
        self.transport = transport
        self.peer_id = peer_id
        self.addr = addr
        self.queue: collections.deque[Message] = collections.deque(maxlen=QUEUE_LIMIT)
        self.wakeup = asyncio.Event()
        self.backoff_s = 0.0
        self.retry_at = 0.0
        self.connect_failures = 0
        self.task: asyncio.Task[None] | None = None

    def offer(self, message: Message) -> None:
        if self.backoff_s and time.monotonic() < self.retry_at:
            return  # the peer is down: dropped, as the network would
        self.queue.append(message)
        self.wakeup.set()

    async def run(self) -> None:
        while True:
            await self.wakeup.wait()
            self.wakeup.clear()
            try:
                await self._drain()
            except (RemotingError, OSError) as exc:
                self._back_off(exc)

    async def _drain(self) -> None:
        client = self.transport.client
        while self.queue:
            channel = await client.get_channel(self.addr)
            if self.backoff_s:
                log.info("controller peer %d at %s reachable again", self.peer_id, self.addr)
                self.backoff_s = 0.0
            message = self.queue.popleft()
            body = encode_message(message)
            await channel.invoke_oneway(RemotingCommand.create_request(RAFT_MESSAGE, body=body))

    def _back_off(self, exc: BaseException) -> None:
        self.connect_failures += 1
        self.queue.clear()
        first = not self.backoff_s
        transport = self.transport
        self.backoff_s = min(
            transport.backoff_max_s, max(transport.backoff_initial_s, self.backoff_s * 2)
        )
        self.retry_at = time.monotonic() + self.backoff_s
        (log.warning if first else log.debug)(
            "controller peer %d at %s unreachable (%s); retry in %.1f s",
            self.peer_id,
            self.addr,
            exc,
            self.backoff_s,
        )


class RaftTransport:
    def __init__(
        self,
        peers: Mapping[int, str],
        self_id: int,
        on_message: Callable[[Message], None],
        *,
        backoff_initial_s: float = 0.1,
        backoff_max_s: float = 2.0,
        connect_timeout_s: float = 1.0,
    ) -> None:
        self.self_id = self_id
        self.on_message = on_message
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.client = RemotingClient(connect_timeout_s=connect_timeout_s)
        self._senders = {
            peer_id: _PeerSender(self, peer_id, addr)
            for peer_id, addr in peers.items()
            if peer_id != self_id
        }
        self.received_count = 0
        self.rejected_count = 0

    def register_to(self, server: RemotingServer) -> None:
        server.register_fast_processor(RAFT_MESSAGE, self._on_request)

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        for sender in self._senders.values():
            if sender.task is None:
                sender.task = loop.create_task(sender.run())

    def send(self, messages: Iterable[Message]) -> None:
        for message in messages:
            sender = self._senders.get(message.to)
            if sender is not None:
                sender.offer(message)

    def connect_failures(self, peer_id: int) -> int:
        """How often sending to ``peer_id`` failed (each failure starts a backoff)."""
        return self._senders[peer_id].connect_failures

    def _on_request(self, channel: RemotingChannel, request: RemotingCommand) -> None:
        try:
            message = decode_message(request.body or b"")
        except MessageDecodeError as exc:
            self.rejected_count += 1
            log.warning("bad raft message from %s: %s; closing it", channel.remote_addr, exc)
            channel.close()
            return
        self.received_count += 1
        self.on_message(message)

    async def stop(self) -> None:
        tasks = [s.task for s in self._senders.values() if s.task is not None]
        for sender in self._senders.values():
            sender.task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.client.shutdown()
