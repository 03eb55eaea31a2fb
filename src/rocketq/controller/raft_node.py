"""``RaftNode``: the asyncio driver of the sans-IO Raft core; our ``MetadataLog``.

Theory of operation. One task (the Ready loop) owns the ``RawNode``: every input (a peer
message, a tick, a proposal, a read) is queued as a closure and run by that task between two
Readys, never between ``ready()`` and ``advance()``. For each Ready, in this order:

1. persist the snapshot, the entries and the hard state (``RaftStorage``, in a worker thread
   so the event loop keeps serving; inputs that arrive meanwhile wait in the queue);
2. only then hand the messages to the transport (the Ready contract: nothing is sent on the
   strength of a write a crash could take back);
3. restore an installed snapshot, apply the committed entries to the state machine, resolve
   the proposals of this node by (index, term), and answer the reads whose ReadIndex is applied;
4. ``advance``; if this node no longer leads, fail every pending proposal and read
   (``NotLeaderError``: a proposal's outcome is then unknown, it may still commit).

Every ``snapshot_entries`` applied entries the state machine is snapshotted, persisted and the
log compacted. A restarted node restores the snapshot, then re-applies the committed entries
after it from its log in its first Ready.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import random
from collections.abc import Callable, Iterable

from rocketq.controller.metadata_log import NotLeaderError, ReplicatedStateMachine
from rocketq.controller.raft import Message, RaftConfig, RawNode, Ready, Role, Snapshot
from rocketq.controller.raft_requests import PendingRequests
from rocketq.controller.raft_storage import RaftStorage
from rocketq.errors import IllegalStateError

log = logging.getLogger(__name__)

RoleListener = Callable[[Role, int, int | None], None]
"""Called with (role, term, leader id) whenever one of them changes."""


class RaftNode:
    def __init__(
        self,
        config: RaftConfig,
        storage: RaftStorage,
        state_machine: ReplicatedStateMachine,
        send: Callable[[Iterable[Message]], None],
        *,
        tick_s: float = 0.1,
        snapshot_entries: int = 1000,
    ) -> None:
        self.config = config
        self.storage = storage
        self.state_machine = state_machine
        self._send = send
        self.tick_s = tick_s
        self.snapshot_entries = snapshot_entries
        self.applied = 0
        self._raw: RawNode | None = None
        self._inputs: collections.deque[Callable[[RawNode], None]] = collections.deque()
        self._wakeup = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._pending = PendingRequests(self._not_leader)
        self._read_ids = itertools.count(1)
        self._role_listeners: list[RoleListener] = []
        self._seen: tuple[Role, int, int] = (Role.FOLLOWER, 0, 0)
        self._io: asyncio.Future[None] | None = None  # the storage write in flight
        self.halted: str | None = None

    # ---- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        if self._raw is not None:
            raise IllegalStateError("raft node already started")
        restored = await asyncio.to_thread(self.storage.open)
        if restored.snapshot.index:
            self.state_machine.restore(restored.snapshot.data)
        self.applied = restored.snapshot.index
        self._raw = RawNode(self.config, restored)
        self._seen = (Role.FOLLOWER, restored.hard_state.term, 0)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._run()), loop.create_task(self._tick_loop())]
        self._wakeup.set()

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._io is not None:  # a write the cancelled loop left running: let it finish
            with contextlib.suppress(Exception):
                await self._io
        self._fail_pending("controller node stopped")
        await asyncio.to_thread(self.storage.close)

    def add_role_listener(self, listener: RoleListener) -> None:
        self._role_listeners.append(listener)

    # ---- inputs ------------------------------------------------------------------------------

    def step(self, message: Message) -> None:
        """A message from a peer (the transport calls this)."""
        self._submit(lambda raw: raw.step(message))

    def campaign(self) -> None:
        """Start an election now (tests; an operator's leadership transfer one day)."""
        self._submit(lambda raw: raw.campaign())

    async def propose(self, data: bytes) -> tuple[int, object]:
        if not data:
            raise ValueError("empty data is reserved for the leader's no-op entry")
        future: asyncio.Future[tuple[int, object]] = asyncio.get_running_loop().create_future()

        def action(raw: RawNode) -> None:
            index = raw.propose(data)
            if index is None:
                future.set_exception(self._not_leader("not the serving controller leader"))
            else:
                self._pending.add_proposal(index, raw.term, future)

        self._submit(action)
        return await future

    async def read_barrier(self) -> int:
        context = next(self._read_ids).to_bytes(8, "big")
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def action(raw: RawNode) -> None:
            if raw.read_index(context):
                self._pending.add_read(context, future)
            else:
                future.set_exception(self._not_leader("not the serving controller leader"))

        self._submit(action)
        return await future

    def _submit(self, action: Callable[[RawNode], None]) -> None:
        if not self._tasks or self.halted:
            raise IllegalStateError(f"raft node not running: {self.halted or 'not started'}")
        self._inputs.append(action)
        self._wakeup.set()

    # ---- observation -------------------------------------------------------------------------

    @property
    def raw(self) -> RawNode:
        if self._raw is None:
            raise IllegalStateError("raft node not started")
        return self._raw

    @property
    def leader_id(self) -> int | None:
        if self._raw is None or self.halted:
            return None
        return self._raw.leader or None

    @property
    def term(self) -> int:
        return self._raw.term if self._raw is not None else 0

    @property
    def is_leader(self) -> bool:
        return self._raw is not None and not self.halted and self._raw.is_serving()

    @property
    def role(self) -> Role:
        return self._raw.role if self._raw is not None else Role.FOLLOWER

    # ---- the Ready loop ----------------------------------------------------------------------

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            self._submit(RawNode.tick)

    async def _run(self) -> None:
        try:
            await self._ready_loop(self.raw)
        except Exception as exc:  # storage failed: a node that cannot persist must not go on
            log.critical("controller node %d halted", self.config.node_id, exc_info=True)
            self.halted = f"halted after {exc!r}"
            self._fail_pending(self.halted)
            for task in self._tasks:
                if task is not asyncio.current_task():
                    task.cancel()

    async def _ready_loop(self, raw: RawNode) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            self._drain_inputs(raw)
            while raw.has_ready():
                ready = raw.ready()
                await self._persist(ready)
                self._send(ready.messages)
                self._apply(ready)
                raw.advance(ready)
                self._after_advance(raw)
                self._drain_inputs(raw)
            if self.applied - raw.log.snapshot.index >= self.snapshot_entries:
                await self._compact(raw)

    def _drain_inputs(self, raw: RawNode) -> None:
        while self._inputs:
            action = self._inputs.popleft()
            try:
                action(raw)
            except Exception:  # one bad input (a proposal's ValueError) must not stop the node
                log.exception("raft input failed")

    async def _persist(self, ready: Ready) -> None:
        if ready.snapshot is None and not ready.entries and ready.hard_state is None:
            return
        await self._in_thread(self._persist_sync, ready)

    async def _in_thread(self, function: Callable[..., None], *args: object) -> None:
        """Run a storage write in a thread; ``stop`` waits for it even if this task is
        cancelled, so the store is never closed under a write."""
        self._io = asyncio.ensure_future(asyncio.to_thread(function, *args))
        try:
            await asyncio.shield(self._io)
        finally:
            if self._io.done():
                self._io = None

    def _persist_sync(self, ready: Ready) -> None:
        storage = self.storage
        if ready.snapshot is not None:
            storage.save_snapshot(ready.snapshot, keep_tail=False)
        storage.append(ready.entries)
        if ready.hard_state is not None:
            storage.save_hard_state(ready.hard_state)

    def _apply(self, ready: Ready) -> None:
        if ready.snapshot is not None:
            self.state_machine.restore(ready.snapshot.data)
            self.applied = ready.snapshot.index
        for entry in ready.committed_entries:
            result: object = None
            error: Exception | None = None
            if entry.data:
                try:
                    result = self.state_machine.apply(entry.index, entry.data)
                except Exception as exc:  # deterministic on every node; the proposer hears it
                    log.exception("state machine failed to apply entry %d", entry.index)
                    error = exc
            self.applied = entry.index
            self._pending.resolve(entry.index, entry.term, result, error)
        self._pending.read_states(ready.read_states, self.applied)

    def _after_advance(self, raw: RawNode) -> None:
        seen = (raw.role, raw.term, raw.leader)
        if seen == self._seen:
            return
        self._seen = seen
        log.info("controller node %d: %s in term %d, leader %d", raw.id, raw.role.value, *seen[1:])
        if raw.role is not Role.LEADER:
            self._fail_pending("leadership lost before the entry was applied; outcome unknown")
        for listener in self._role_listeners:
            try:
                listener(raw.role, raw.term, raw.leader or None)
            except Exception:  # a listener's failure must not stop the Ready loop
                log.exception("role listener failed")

    def _fail_pending(self, reason: str) -> None:
        self._pending.fail_all(reason)

    def _not_leader(self, reason: str) -> NotLeaderError:
        return NotLeaderError(reason, self.leader_id)

    async def _compact(self, raw: RawNode) -> None:
        index = self.applied
        term = raw.log.term(index)
        assert term is not None
        data = self.state_machine.snapshot()
        await self._in_thread(self.storage.save_snapshot, Snapshot(index, term, data))
        raw.compact(index, data)
        log.info("controller node %d: snapshot at %d (%d bytes)", raw.id, index, len(data))


def new_raft_config(
    node_id: int, peers: tuple[int, ...], *, election_tick: int = 10, heartbeat_tick: int = 1
) -> RaftConfig:
    """The core's config with real randomness for election timeouts."""
    return RaftConfig(
        node_id=node_id,
        peers=peers,
        rng=random.Random(),
        election_tick=election_tick,
        heartbeat_tick=heartbeat_tick,
    )
