"""The load side of the fault suite: asyncio producers sending SYNC with unique keys to the
group's master as the controller names it, a consumer pulling every queue from that master,
and the ledger both write (key, SEND_OK offsets, broker, time; consumed positions)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
)
from rocketq.common.message_decoder import decode_messages
from rocketq.common.message_id import decode_message_id
from rocketq.errors import RemotingError
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.testing.wire import pull_request, send_request

TOPIC = "TopicFaults"
QUEUES = 4
SEND_TIMEOUT_S = 3.0
RETRY_PACE_S = 0.02  # a refused or cut send is tried again after this (a retry pace)
ROUTE_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class Ack:
    """One SEND_OK: the key, where the broker said it stored it, who said so and when."""

    producer: int
    seq: int  # the key is body_of(producer, seq): the ledger keeps no bodies
    queue_id: int
    queue_offset: int
    phy_offset: int
    broker: str
    sent_at: float
    at: float


def body_of(producer: int, seq: int) -> bytes:
    """The unique key and body of a producer's ``seq``-th message."""
    return b"p%02d-%08d-" % (producer, seq) + b"x" * 64


@dataclass(frozen=True, slots=True)
class Consumed:
    queue_id: int
    queue_offset: int
    body: bytes


@dataclass
class Ledger:
    acks: list[Ack] = field(default_factory=list)
    consumed: list[Consumed] = field(default_factory=list)
    failed_sends: int = 0
    #: set on every SEND_OK (a waiter clears it, then checks the acks)
    new_ack: asyncio.Event = field(default_factory=asyncio.Event)


class Route:
    """The group's master as the controller names it, polled every 50 ms (our client's fast
    route refresh stands in for this: it is told of a new master as promptly)."""

    def __init__(self, ctl: ControllerClient, broker_name: str) -> None:
        self.ctl = ctl
        self.broker_name = broker_name
        self.master = ""
        self.epoch = 0
        self.changed = asyncio.Event()

    async def poll(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                view = await asyncio.wait_for(self.ctl.get_replica_info(self.broker_name), 2)
            except (ControllerRequestError, OSError, TimeoutError):
                self.ctl.leader_addr = ""  # the leader may be gone: ask the group again
            else:
                if view.master_epoch != self.epoch or view.master_address != self.master:
                    self.master, self.epoch = view.master_address or "", view.master_epoch
                    self.changed.set()
                    self.changed = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), ROUTE_POLL_S)


class Load:
    """``producers`` SYNC producers and one consumer until :meth:`stop`; each producer waits
    ``pace_s`` between its sends (0: as fast as the group answers)."""

    def __init__(self, route: Route, ledger: Ledger, producers: int, pace_s: float = 0) -> None:
        self.route = route
        self.pace_s = pace_s
        self.ledger = ledger
        self.producers = producers
        self.client = RemotingClient()
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self.route.poll(self._stop))]
        self._tasks += [asyncio.create_task(self._produce(n)) for n in range(self.producers)]
        self._tasks.append(asyncio.create_task(self._consume()))

    async def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), 30)
        for task in self._tasks:
            task.cancel()
        await self.client.shutdown()

    async def _produce(self, n: int) -> None:
        seq = 0
        while not self._stop.is_set():
            seq += 1
            while not self._stop.is_set():  # the same key until acknowledged (duplicates count)
                if await self._send(n, seq):
                    break
                self.ledger.failed_sends += 1
                await asyncio.sleep(RETRY_PACE_S)
            if self.pace_s:
                await asyncio.sleep(self.pace_s)  # the load's own rate, not synchronization

    async def _send(self, n: int, seq: int) -> bool:
        addr = self.route.master
        if not addr:
            return False
        sent_at = time.monotonic()
        try:
            request = send_request(TOPIC, body_of(n, seq), queue_id=seq % QUEUES)
            response = await self.client.invoke(addr, request, SEND_TIMEOUT_S)
        except (OSError, RemotingError):
            return False
        if response.code != ResponseCode.SUCCESS:
            return False
        fields = response.ext_fields
        phy = decode_message_id(fields["msgId"])[1]
        ack = Ack(
            n,
            seq,
            int(fields["queueId"]),
            int(fields["queueOffset"]),
            phy,
            addr,
            sent_at,
            time.monotonic(),
        )
        self.ledger.acks.append(ack)
        self.ledger.new_ack.set()
        return True

    async def _consume(self) -> None:
        offsets = dict.fromkeys(range(QUEUES), 0)
        while not self._stop.is_set():
            pulled = 0
            for queue_id in range(QUEUES):
                pulled += await self._pull(queue_id, offsets)
            if not pulled:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), 0.1)

    async def _pull(self, queue_id: int, offsets: dict[int, int]) -> int:
        addr = self.route.master
        if not addr:
            return 0
        request = pull_request("FaultsConsumer", TOPIC, queue_id, offsets[queue_id], suspend_ms=0)
        try:
            response = await self.client.invoke(addr, request, SEND_TIMEOUT_S)
        except (OSError, RemotingError):
            return 0
        if response.code != ResponseCode.SUCCESS or not response.body:
            return 0
        msgs = decode_messages(response.body)
        for msg in msgs:
            self.ledger.consumed.append(Consumed(queue_id, msg.queue_offset, bytes(msg.body)))
        offsets[queue_id] = int(response.ext_fields["nextBeginOffset"])
        return len(msgs)
