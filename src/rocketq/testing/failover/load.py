"""The load side of the fault suite: SYNC producers, each its own OS process
(:mod:`.producer`) sending unique keys to one group's master and writing its ledger file; two
consumer groups pulling every queue of every group from its master (asyncio tasks here),
committing their offsets there and taking the new master's offsets after a change of master
(:mod:`.reconsume` counts what that consumes again); and the ledger (key, SEND_OK offsets,
broker, time; consumed positions; re-consumptions) the checker reads."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
)
from rocketq.common.message_decoder import decode_messages
from rocketq.common.pull_sys_flag import FLAG_COMMIT_OFFSET, FLAG_SUBSCRIPTION
from rocketq.errors import RemotingError
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing.failover.reconsume import ConsumptionClock, QueueCursor, ReConsumed
from rocketq.testing.wire import pull_request, request

TOPIC = "TopicFaults"
QUEUES = 4
SEND_TIMEOUT_S = 3.0
ROUTE_POLL_S = 0.05
CONSUMER_GROUPS = ("FaultsConsumer0", "FaultsConsumer1")
#: a pull answered (with messages or none): the consumer is consuming
PULL_ANSWERS = frozenset(
    {
        ResponseCode.SUCCESS,
        ResponseCode.PULL_NOT_FOUND,
        ResponseCode.PULL_RETRY_IMMEDIATELY,
        ResponseCode.PULL_OFFSET_MOVED,
    }
)


@dataclass(frozen=True, slots=True)
class Ack:
    """One SEND_OK: the key, where the broker said it stored it, who said so and when
    (``time.monotonic()``: one clock for every process of the machine)."""

    group: str  # the brokerName the producer sends to
    producer: int
    seq: int  # the key is body_of(producer, seq): the ledger keeps no bodies
    queue_id: int
    queue_offset: int
    phy_offset: int
    broker: str
    sent_at: float
    at: float

    def line(self) -> str:
        """The ledger file's line for this ack (space-separated, no spaces inside fields)."""
        return " ".join(str(getattr(self, name)) for name in self.__slots__)

    @classmethod
    def parse(cls, line: str) -> Ack:
        g, p, s, q, qo, phy, b, sent, at = line.split()
        return cls(g, int(p), int(s), int(q), int(qo), int(phy), b, float(sent), float(at))


def body_of(producer: int, seq: int) -> bytes:
    """The unique key and body of a producer's ``seq``-th message."""
    return b"p%02d-%08d-" % (producer, seq) + b"x" * 64


@dataclass(frozen=True, slots=True)
class Consumed:
    group: str  # the brokerName it was pulled from
    consumer_group: str
    queue_id: int
    queue_offset: int
    body: bytes


@dataclass
class Ledger:
    acks: list[Ack] = field(default_factory=list)
    consumed: list[Consumed] = field(default_factory=list)
    failed: list[tuple[int, float]] = field(default_factory=list)  # (producer, when)
    reconsumed: list[ReConsumed] = field(default_factory=list)  # rewinds after a new master
    #: set on every SEND_OK (a waiter clears it, then checks the acks)
    new_ack: asyncio.Event = field(default_factory=asyncio.Event)

    def of_group(self, group: str) -> Ledger:
        return Ledger(
            acks=[a for a in self.acks if a.group == group],
            consumed=[c for c in self.consumed if c.group == group],
        )


def read_ledgers(paths: Iterable[Path]) -> list[Ack]:
    """The acks the producer processes wrote to their ledger files."""
    acks = []
    for path in paths:
        if path.exists():
            acks += [Ack.parse(line) for line in path.read_text().splitlines() if line]
    return acks


class Route:
    """The group's master as the controller names it, polled every 50 ms (our client's fast
    route refresh stands in for this: it is told of a new master as promptly). ``via`` maps a
    broker address to the address clients reach it by (a client-side proxy), if any."""

    def __init__(
        self, ctl: ControllerClient, broker_name: str, via: Mapping[str, str] | None = None
    ) -> None:
        self.ctl = ctl
        self.broker_name = broker_name
        self.via = dict(via or {})
        self.master = ""
        self.epoch = 0

    def client_addr(self, addr: str) -> str:
        """Where a client sends what is meant for broker ``addr``."""
        return self.via.get(addr, addr)

    async def poll(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                view = await asyncio.wait_for(self.ctl.get_replica_info(self.broker_name), 2)
            except (ControllerRequestError, OSError, TimeoutError):
                self.ctl.leader_addr = ""  # the leader may be gone: ask the group again
            else:
                self.master, self.epoch = view.master_address or "", view.master_epoch
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), ROUTE_POLL_S)


class ProducerProcess:
    """One :mod:`.producer` process; its SEND_OK lines reach the ledger as they come."""

    def __init__(self, n: int, group: str, ledger_path: Path, argv: list[str]) -> None:
        self.n = n
        self.group = group
        self.ledger_path = ledger_path
        self.argv = argv
        self.proc: asyncio.subprocess.Process | None = None
        self.reader: asyncio.Task[None] | None = None

    async def start(self, ledger: Ledger) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "rocketq.testing.failover.producer",
            *self.argv,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.reader = asyncio.create_task(self._read(ledger))

    async def _read(self, ledger: Ledger) -> None:
        assert self.proc is not None
        assert self.proc.stdout is not None
        async for raw in self.proc.stdout:
            line = raw.decode().strip()
            if line.startswith("A "):
                ledger.acks.append(Ack.parse(line[2:]))
                ledger.new_ack.set()
            elif line.startswith("F "):
                ledger.failed.append((self.n, float(line.split()[1])))

    async def stop(self) -> None:
        """SIGTERM (the producer finishes its send in flight), then SIGKILL after 10 s."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        if self.reader is not None:
            await asyncio.wait_for(self.reader, 10)


class Load:
    """``producers`` producer processes (split over the groups) and the consumer groups, until
    :meth:`stop`; each producer waits ``pace_s`` between its sends (0: as fast as it can)."""

    def __init__(
        self,
        routes: dict[str, Route],
        ledger: Ledger,
        producers: int,
        pace_s: float,
        producer_argv: list[str],
        work_dir: Path,
    ) -> None:
        self.routes = routes
        self.ledger = ledger
        self.client = RemotingClient()
        groups = list(routes)
        self.producers = [
            ProducerProcess(
                n,
                groups[n % len(groups)],
                work_dir / f"ledger-p{n}.txt",
                [
                    *producer_argv,
                    *("--group", groups[n % len(groups)], "--id", str(n)),
                    *("--pace", str(pace_s), "--ledger", str(work_dir / f"ledger-p{n}.txt")),
                ],
            )
            for n in range(producers)
        ]
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def producers_of(self, group: str) -> list[int]:
        return [p.n for p in self.producers if p.group == group]

    async def start(self) -> None:
        self._tasks = [asyncio.create_task(r.poll(self._stop)) for r in self.routes.values()]
        self._tasks += [
            asyncio.create_task(self._consume(group, cg))
            for group in self.routes
            for cg in CONSUMER_GROUPS
        ]
        await asyncio.gather(*(p.start(self.ledger) for p in self.producers))

    async def stop(self) -> None:
        await asyncio.gather(*(p.stop() for p in self.producers), return_exceptions=True)
        self._stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), 30)
        for task in self._tasks:
            task.cancel()
        await self.client.shutdown()

    def ledger_paths(self) -> list[Path]:
        return [p.ledger_path for p in self.producers]

    async def _consume(self, group: str, consumer_group: str) -> None:
        cursors = {q: QueueCursor() for q in range(QUEUES)}
        clock = ConsumptionClock()  # the consumption time the rewinds count
        master = ""  # the master whose offsets the cursors follow
        while not self._stop.is_set():
            addr = self.routes[group].master
            if addr and addr != master:
                if master and not await self._take_offsets(addr, group, consumer_group, cursors):
                    addr = ""  # asked again on the next round
                master = addr or master
            pulled = 0
            # only from the master whose offsets the cursors follow: a pull to the new one
            # before its offsets were taken would commit the old cursor there (and hide the
            # rewind); while its offsets are refused (fenced), nothing is pulled
            if master and master == self.routes[group].master:
                for queue_id in range(QUEUES):
                    pulled += await self._pull(
                        master, group, consumer_group, queue_id, cursors[queue_id], clock
                    )
            else:
                clock.unreachable(time.monotonic())
            if not pulled:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), 0.1)

    async def _take_offsets(
        self, addr: str, group: str, consumer_group: str, cursors: dict[int, QueueCursor]
    ) -> bool:
        """A new master: pull from the offsets it holds (what the old master's commits left
        it), counting what that consumes again; False if it did not answer them all."""
        committed: dict[int, int] = {}
        for queue_id in cursors:
            query = request(
                RequestCode.QUERY_CONSUMER_OFFSET,
                consumerGroup=consumer_group,
                topic=TOPIC,
                queueId=queue_id,
            )
            try:
                to = self.routes[group].client_addr(addr)
                response = await self.client.invoke(to, query, SEND_TIMEOUT_S)
            except (OSError, RemotingError):
                return False
            if response.code == ResponseCode.SUCCESS:
                committed[queue_id] = int(response.ext_fields["offset"])
            elif response.code != ResponseCode.QUERY_NOT_FOUND:
                return False  # fenced, say: not master yet
        for queue_id, offset in committed.items():
            rewind = cursors[queue_id].rewind(group, consumer_group, queue_id, offset)
            if rewind.count:
                self.ledger.reconsumed.append(rewind)
        return True

    async def _pull(
        self,
        addr: str,
        group: str,
        consumer_group: str,
        queue_id: int,
        cursor: QueueCursor,
        clock: ConsumptionClock,
    ) -> int:
        pull_offset = cursor.offset
        pull = pull_request(
            consumer_group, TOPIC, queue_id, pull_offset, suspend_ms=0,
            sys_flag=FLAG_COMMIT_OFFSET | FLAG_SUBSCRIPTION, commit_offset=pull_offset,
        )  # fmt: skip
        sent = time.monotonic()
        try:
            to = self.routes[group].client_addr(addr)
            response = await self.client.invoke(to, pull, SEND_TIMEOUT_S)
        except (OSError, RemotingError):
            clock.pulled(sent, time.monotonic(), answered=False)  # a paused master, say
            return 0
        done = time.monotonic()
        answered = response.code in PULL_ANSWERS
        consuming_s = clock.pulled(sent, done, answered=answered)
        if answered:
            cursor.committed(pull_offset, done)
        if response.code != ResponseCode.SUCCESS or not response.body:
            return 0
        msgs = decode_messages(response.body)
        for msg in msgs:
            self.ledger.consumed.append(
                Consumed(group, consumer_group, queue_id, msg.queue_offset, bytes(msg.body))
            )
        cursor.consumed(
            msgs[0].queue_offset, int(response.ext_fields["nextBeginOffset"]), done, consuming_s
        )
        return len(msgs)
