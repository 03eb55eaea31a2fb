"""``SimNode``: one simulated controller, a ``RawNode`` embedded the way a real program embeds
it: persist the Ready, fsync, send, apply, advance (see ``rocketq.controller.raft.raw_node``).

The ``unsafe_skip_fsync_before_reply`` switch breaks that order on purpose (the writes are
flushed only at the next tick, after the messages left), to prove the checker notices.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from rocketq.controller.raft import Entry, Message, RaftConfig, RawNode, ReadState, Snapshot
from rocketq.testing.raft_simulation.disk import SimDisk
from rocketq.testing.raft_simulation.register import CasCommand, RegisterStore

ApplyHook = Callable[[int, Entry, bool], None]
"""(node id, entry applied, True when the entry stands for an installed snapshot)"""


@dataclass(slots=True)
class SimNode:
    node_id: int
    config: RaftConfig
    rng: random.Random
    on_apply: ApplyHook
    snapshot_every: int = 16
    unsafe_skip_fsync_before_reply: bool = False
    disk: SimDisk = field(default_factory=SimDisk)
    raw: RawNode | None = None
    store: RegisterStore = field(default_factory=RegisterStore)
    crash_in_next_ready: bool = False
    completions: list[tuple[int, object]] = field(default_factory=list)
    waiting_reads: list[tuple[int, int, int]] = field(default_factory=list)  # index, op, key
    read_keys: dict[bytes, int] = field(default_factory=dict)
    applied: int = 0
    changed: bool = False
    """Whether the last call handled a Ready (nothing the invariants read changes without)."""

    def start(self) -> None:
        self.raw = RawNode(self.config, self.disk.restored())
        self.store = RegisterStore.restore(self.disk.snapshot.data)
        self.applied = self.disk.snapshot.index
        self.waiting_reads = []
        self.read_keys = {}
        self.completions = []

    def crash(self) -> None:
        self.disk.crash(self.rng)
        self.raw = None
        self.crash_in_next_ready = False

    def tick(self) -> list[Message]:
        assert self.raw is not None
        if self.unsafe_skip_fsync_before_reply:
            self.disk.sync()  # the late background flush
        self.raw.tick()
        return self.handle_ready()

    def step(self, message: Message) -> list[Message]:
        assert self.raw is not None
        self.raw.step(message)
        return self.handle_ready()

    def propose(self, command: CasCommand) -> tuple[bool, list[Message]]:
        assert self.raw is not None
        accepted = self.raw.propose(command.encode()) is not None
        return accepted, self.handle_ready()

    def read(self, op_id: int, key: int) -> tuple[bool, list[Message]]:
        assert self.raw is not None
        context = op_id.to_bytes(8, "big")
        accepted = self.raw.read_index(context)
        if accepted:
            self.read_keys[context] = key
        return accepted, self.handle_ready()

    def handle_ready(self) -> list[Message]:
        raw = self.raw
        out: list[Message] = []
        self.changed = False
        while raw is not None and raw.has_ready():
            self.changed = True
            ready = raw.ready()
            disk = self.disk
            if ready.snapshot is not None:
                disk.write_snapshot(ready.snapshot)
            if ready.entries:
                disk.write_entries(ready.entries)
            if ready.hard_state is not None:
                disk.write_hard_state(ready.hard_state)
            if self.crash_in_next_ready:
                self.crash()  # power lost before the fsync returned: nothing was sent
                return []
            if not self.unsafe_skip_fsync_before_reply:
                disk.sync()
            out.extend(ready.messages)
            if ready.snapshot is not None:
                self._restore(ready.snapshot)
            for entry in ready.committed_entries:
                self._apply(entry)
            self._queue_reads(ready.read_states)
            raw.advance(ready)
            self._maybe_compact(raw)
        return out

    def _restore(self, snapshot: Snapshot) -> None:
        self.store = RegisterStore.restore(snapshot.data)
        self.applied = snapshot.index
        self.on_apply(self.node_id, Entry(snapshot.index, snapshot.term), True)

    def _apply(self, entry: Entry) -> None:
        self.on_apply(self.node_id, entry, False)
        self.applied = entry.index
        if entry.data:
            command = CasCommand.decode(entry.data)
            self.completions.append((command.op_id, self.store.apply(command)))
        self._serve_reads(entry.index)

    def _queue_reads(self, read_states: tuple[ReadState, ...]) -> None:
        for state in read_states:
            key = self.read_keys.pop(state.context, None)
            if key is not None:
                op_id = int.from_bytes(state.context, "big")
                self.waiting_reads.append((state.index, op_id, key))
        self._serve_reads(self.applied)

    def _serve_reads(self, applied: int) -> None:
        if self.waiting_reads:
            ready = [w for w in self.waiting_reads if w[0] <= applied]
            if ready:
                self.waiting_reads = [w for w in self.waiting_reads if w[0] > applied]
                self.completions.extend((op, self.store.read(key)) for _, op, key in ready)

    def _maybe_compact(self, raw: RawNode) -> None:
        log = raw.log
        if log.applied - log.snapshot.index >= self.snapshot_every:
            term = log.term(log.applied)
            assert term is not None
            data = self.store.snapshot()
            self.disk.compact(Snapshot(log.applied, term, data))
            raw.compact(log.applied, data)
