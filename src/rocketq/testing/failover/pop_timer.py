"""A POP consumer group and pending timers under the fault schedule (the RocketMQ 5 half of
issue 20's proof: after a failover no acknowledged pop comes back and every timer fires once,
not early).

- POP: group ``FaultsPop`` pops the load's topic from each group's master (as the controller
  names it) and acknowledges every message it gets (BATCH_ACK_MESSAGE per pop); a popped
  message (queue, offset and body: a resent key's second copy is another message) this group
  already saw acknowledged is counted as *came back*, with the time it was seen. Only an ack
  answered SUCCESS well within the invisible time of its pop counts as acknowledged: a later
  one may legitimately lose to the revive (RocketMQ's ``PopReviveService`` redelivers a
  checkpoint whose ack it has not seen by then); those are counted as late acks.
- Timers: a timer message (``TIMER_DELIVER_MS`` 2-6 s ahead, a unique key) sent to each group
  every 250 ms; the ones answered SEND_OK are the ledger (a failed send's key is left out: it
  may or may not have been stored). :func:`check_timers` reads the final master's store (opened
  as a slave, so its wheel does not run during the check): each timer must be there exactly
  once, stored no earlier than its due time.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rocketq.broker.pop.records import AckMsg, PopCheckPoint, loads_record, revive_topic
from rocketq.common import message_const as mc
from rocketq.common.extra_info import NORMAL_TOPIC
from rocketq.common.message_decoder import decode_message
from rocketq.errors import RemotingError, RocketQError
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.store.timer.timer_hook import TIMER_TOPIC as WHEEL_TOPIC
from rocketq.testing.failover.checker import epoch_starts, open_stopped_store
from rocketq.testing.failover.load import TOPIC, Route
from rocketq.testing.pop import Popped, batch_ack, pop
from rocketq.testing.wire import send_request

POP_GROUP = "FaultsPop"
TIMER_TOPIC = "TopicFaultsTimer"
INVISIBLE_MS = 10_000
ACK_MARGIN_S = 2.0  # an ack counts if answered this long before its pop's invisible time ends
TIMER_EVERY_S = 0.25
DUE_S = (2.0, 6.0)
REQUEST_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class Timer:
    group: str
    key: str
    due_ms: int  # wall clock, as TIMER_DELIVER_MS
    sent_at: float  # time.monotonic(), as the fault times


@dataclass(frozen=True, slots=True)
class CameBack:
    group: str
    key: str
    at: float  # time.monotonic() of the pop that returned it
    detail: str = ""  # which broker answered the ack and the pop again, how far apart

    @property
    def origin(self) -> tuple[int, int]:
        """(queue id, queue offset) of the acknowledged copy in the load's topic."""
        queue_id, offset = self.key.rsplit("@", 1)[1].split(":")
        return int(queue_id), int(offset)


@dataclass
class PopTimerLedger:
    #: group -> (queue id, queue offset, body) of each message acknowledged -> (the broker
    #: that answered the pop and the ack, time.monotonic() of the ack's answer, the master
    #: epoch the route named when the pop was sent)
    acked: dict[str, dict[tuple[int, int, bytes], tuple[str, float, int]]] = field(
        default_factory=dict
    )
    #: group -> the client msg id of each message acknowledged -> its key in ``acked`` (a
    #: revived copy names it in ORIGIN_MESSAGE_ID)
    acked_ids: dict[str, dict[str, tuple[int, int, bytes]]] = field(default_factory=dict)
    came_back: list[CameBack] = field(default_factory=list)
    popped: int = 0
    late_acks: int = 0
    timers: list[Timer] = field(default_factory=list)

    @property
    def last_due_ms(self) -> int:
        return max((t.due_ms for t in self.timers), default=0)


@dataclass
class TimerVerdict:
    timers: int = 0
    missing: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)  # keys
    #: per key fired twice: the epoch of each copy (its commitlog offset in the epoch file)
    #: and the store times' spread
    twice_detail: list[str] = field(default_factory=list)
    early: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        return (
            [f"timer never fired: {k}" for k in self.missing[:20]]
            + [f"timer fired more than once: {k}" for k in self.twice[:20]]
            + [f"timer fired early: {k}" for k in self.early[:20]]
        )


class PopTimerLoad:
    def __init__(self, routes: dict[str, Route], ledger: PopTimerLedger, seed: int = 1) -> None:
        self.routes = routes
        self.ledger = ledger
        self.rng = random.Random(seed)
        self.client = RemotingClient()
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        for group in self.routes:
            self.ledger.acked.setdefault(group, {})
            self.ledger.acked_ids.setdefault(group, {})
            self._tasks.append(asyncio.create_task(self._pop(group)))
            self._tasks.append(asyncio.create_task(self._timers(group)))

    async def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*self._tasks, return_exceptions=True), 30)
        for task in self._tasks:
            task.cancel()
        await self.client.shutdown()

    async def _idle(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    async def _pop(self, group: str) -> None:
        acked, ids = self.ledger.acked[group], self.ledger.acked_ids[group]
        while not self._stop.is_set():
            route = self.routes[group]
            addr = route.client_addr(route.master) if route.master else ""
            if not addr:
                await self._idle(0.1)
                continue
            epoch = route.epoch  # the master epoch named when the pop was sent
            popped_at = time.monotonic()
            try:
                _, popped = await asyncio.wait_for(
                    pop(self.client, addr, group, POP_GROUP, TOPIC, invisible_ms=INVISIBLE_MS),
                    REQUEST_TIMEOUT_S,
                )
            except (OSError, RemotingError, TimeoutError):
                popped = []
            if not popped:
                await self._idle(0.1)
                continue
            self.ledger.popped += len(popped)
            keys = [(p.msg.queue_id, p.msg.queue_offset, bytes(p.msg.body)) for p in popped]
            now = time.monotonic()
            for p, k in zip(popped, keys, strict=True):
                came = came_back(group, acked, ids, p, k, f"{addr} (epoch {epoch})", now)
                if came is not None:
                    self.ledger.came_back.append(came)
            handles = [p.handle for p in popped]
            with contextlib.suppress(OSError, RemotingError, TimeoutError):
                response = await asyncio.wait_for(
                    batch_ack(self.client, addr, group, POP_GROUP, TOPIC, handles),
                    REQUEST_TIMEOUT_S,
                )
                in_time = time.monotonic() - popped_at < INVISIBLE_MS / 1000 - ACK_MARGIN_S
                if response.code == ResponseCode.SUCCESS and in_time:
                    answered = (addr, time.monotonic(), epoch)
                    acked.update(dict.fromkeys(keys, answered))
                    ids.update((p.msg.client_msg_id, k) for p, k in zip(popped, keys, strict=True))
                elif response.code == ResponseCode.SUCCESS:
                    self.ledger.late_acks += len(keys)

    async def _timers(self, group: str) -> None:
        n = 0
        while not self._stop.is_set():
            n += 1
            route = self.routes[group]
            addr = route.client_addr(route.master) if route.master else ""
            key = f"{group}-t{n:06d}"
            due_ms = int((time.time() + self.rng.uniform(*DUE_S)) * 1000)
            sent_at = time.monotonic()
            extra = {
                mc.PROPERTY_TIMER_DELIVER_MS: str(due_ms),
                mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: key,
            }
            request = send_request(TIMER_TOPIC, key.encode(), extra=extra)
            with contextlib.suppress(OSError, RemotingError, TimeoutError):
                if addr:
                    response = await self.client.invoke(addr, request, REQUEST_TIMEOUT_S)
                    if response.code == ResponseCode.SUCCESS:
                        self.ledger.timers.append(Timer(group, key, due_ms, sent_at))
            await self._idle(TIMER_EVERY_S)


def came_back(
    group: str,
    acked: dict[tuple[int, int, bytes], tuple[str, float, int]],
    acked_ids: dict[str, tuple[int, int, bytes]],
    popped: Popped,
    key: tuple[int, int, bytes],
    popped_by: str,
    now: float,
) -> CameBack | None:
    """A popped message already acknowledged, with the path that served it again: a
    fresh pop of its queue (the new master's pop offset below it) or a revive into the
    POP retry topic (its checkpoint revived without the ack: matched by ORIGIN_MESSAGE_ID,
    the retry copy has the retry topic's queue and offset)."""
    extra = popped.extra
    if extra.mark == NORMAL_TOPIC:
        if key not in acked:
            return None
        path = f"fresh pop of queue {key[0]} (ck start {extra.ck_queue_offset})"
        first = key
    else:
        origin = popped.msg.properties.get(mc.PROPERTY_ORIGIN_MESSAGE_ID, "")
        if origin not in acked_ids:
            return None
        first = acked_ids[origin]
        path = (
            f"revive: retry topic (mark {extra.mark}) queue {key[0]} offset {key[1]}, "
            f"reconsumeTimes {popped.msg.reconsume_times}"
        )
    by, at, ack_epoch = acked[first]
    return CameBack(
        group,
        f"{first[2][:12].decode()}@{first[0]}:{first[1]}",
        now,
        f"acked by {by} (epoch {ack_epoch}), popped again by {popped_by} "
        f"{now - at:.2f} s later; {path}",
    )


def pop_records_of(
    conf: dict[str, str], wanted: set[tuple[int, int]]
) -> dict[tuple[int, int], list[str]]:
    """The POP group's check points and acks in the stopped store of ``conf`` that cover each
    wanted (queue id, queue offset) of the load's topic: in the wheel topic (written, not yet
    delivered by the timer) and in the revive queues (delivered), with their pop time and the
    epoch of their commitlog offset, so a came-back detail says whether the new master held
    the ack and where."""
    found: dict[tuple[int, int], list[str]] = defaultdict(list)
    store = open_stopped_store({**conf, "brokerRole": "SLAVE"})
    starts = epoch_starts(Path(store.config.epoch_file_path).read_text())
    revive = revive_topic(conf.get("brokerClusterName", "DefaultCluster"))
    queues = [(WHEEL_TOPIC, 0), *((revive, q) for q in range(int(conf.get("reviveQueueNum", 8))))]
    try:
        for topic, queue_id in queues:
            offset = 0
            while True:
                result = store.get_message("check", topic, queue_id, offset, 64)
                if not result.message_buffers:
                    break
                for data in result.message_buffers:
                    msg = decode_message(data, check_crc=False)
                    where = f"{topic}:{queue_id}@{msg.queue_offset}"
                    with contextlib.suppress(RocketQError, ValueError, TypeError, KeyError):
                        record = loads_record(msg.properties.get(mc.PROPERTY_TAGS), msg.body)
                        if record is not None:
                            epoch = epoch_at(starts, msg.commitlog_offset)
                            _note_record(found, wanted, record, f"{where} epoch {epoch}")
                offset = result.next_begin_offset
    finally:
        store.shutdown()
    return found


def _note_record(
    found: dict[tuple[int, int], list[str]],
    wanted: set[tuple[int, int]],
    record: PopCheckPoint | AckMsg,
    where: str,
) -> None:
    if isinstance(record, PopCheckPoint):
        if record.cid != POP_GROUP or record.topic != TOPIC:
            return
        kind, queue_id = "ck", record.queue_id
        offsets = [record.ack_offset_by_index(i) for i in range(record.num)]
    else:
        if record.consumer_group != POP_GROUP or record.topic != TOPIC:
            return
        kind, queue_id, offsets = "ack", record.queue_id, record.ack_offsets()
    for offset in offsets:
        if (queue_id, offset) in wanted:
            found[(queue_id, offset)].append(f"{kind} pop {record.pop_time} in {where}")


def epoch_at(starts: list[tuple[int, int]], offset: int) -> int:
    """The epoch whose range of the epoch file holds commitlog ``offset`` (0 before all)."""
    return next((epoch for start, epoch in reversed(starts) if start <= offset), 0)


def check_timers(conf: dict[str, str], timers: list[Timer]) -> TimerVerdict:
    """Each timer of ``timers`` in the stopped store of ``conf`` once, stored at or after its
    due time (the store opened as a slave: its wheel stays still)."""
    verdict = TimerVerdict(timers=len(timers))
    store = open_stopped_store({**conf, "brokerRole": "SLAVE"})
    copies: Counter[str] = Counter()
    stored_ms: dict[str, int] = {}
    placed: dict[str, list[tuple[int, int]]] = defaultdict(list)  # (store ms, commitlog offset)
    starts = epoch_starts(Path(store.config.epoch_file_path).read_text())
    try:
        offset = 0
        while True:
            result = store.get_message("check", TIMER_TOPIC, 0, offset, 32)
            if not result.message_buffers:
                break
            for data in result.message_buffers:
                msg = decode_message(data, check_crc=False)
                key = bytes(msg.body).decode()
                copies[key] += 1
                placed[key].append((msg.store_timestamp, msg.commitlog_offset))
                stored_ms[key] = min(msg.store_timestamp, stored_ms.get(key, msg.store_timestamp))
            offset = result.next_begin_offset
    finally:
        store.shutdown()
    for timer in timers:
        if copies[timer.key] == 0:
            verdict.missing.append(timer.key)
        elif copies[timer.key] > 1:
            verdict.twice.append(timer.key)
            where = sorted(placed[timer.key])
            epochs = [epoch_at(starts, offset) for _, offset in where]
            verdict.twice_detail.append(
                f"{timer.key}: copies in epochs {epochs}, stored "
                f"{where[-1][0] - where[0][0]} ms apart, first {where[0][0] - timer.due_ms} ms "
                "after due"
            )
        if timer.key in stored_ms and stored_ms[timer.key] < timer.due_ms:
            verdict.early.append(f"{timer.key} {timer.due_ms - stored_ms[timer.key]} ms")
    return verdict
