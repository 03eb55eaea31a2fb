"""``PendingRequests``: the proposals and reads a ``RaftNode`` has accepted and not answered.

A proposal is keyed by the (index, term) the leader gave its entry: when the entry at that
index is applied with that term, the proposer gets the state machine's result; with another
term, a new leader replaced it, and the proposer hears ``NotLeaderError``. A read waits for
its ReadIndex (``ReadState``), then until the state machine has applied that index. When the
node stops leading, everything pending fails (a proposal's outcome is then unknown).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rocketq.controller.metadata_log import NotLeaderError
from rocketq.controller.raft import ReadState

ProposalFuture = asyncio.Future[tuple[int, object]]


class PendingRequests:
    def __init__(self, not_leader: Callable[[str], NotLeaderError]) -> None:
        self._not_leader = not_leader
        self._proposals: dict[int, tuple[int, ProposalFuture]] = {}
        self._reads: dict[bytes, asyncio.Future[int]] = {}
        self._waiting_reads: list[tuple[int, asyncio.Future[int]]] = []

    def __len__(self) -> int:
        """Proposals and reads not answered yet."""
        return len(self._proposals) + len(self._reads) + len(self._waiting_reads)

    def add_proposal(self, index: int, term: int, future: ProposalFuture) -> None:
        self._proposals[index] = (term, future)
        future.add_done_callback(lambda _: self._forget_proposal(index, future))

    def _forget_proposal(self, index: int, future: ProposalFuture) -> None:
        pending = self._proposals.get(index)
        if pending is not None and pending[1] is future:  # the caller gave up (a timeout)
            del self._proposals[index]

    def add_read(self, context: bytes, future: asyncio.Future[int]) -> None:
        self._reads[context] = future
        future.add_done_callback(lambda _: self._reads.pop(context, None))

    def resolve(self, index: int, term: int, result: object, error: Exception | None) -> None:
        """The entry at ``index`` of ``term`` was applied with ``result`` (or ``error``)."""
        pending = self._proposals.pop(index, None)
        if pending is None or pending[1].done():
            return
        proposed_term, future = pending
        if proposed_term != term:
            future.set_exception(self._not_leader(f"entry {index} was replaced by a new leader"))
        elif error is not None:
            future.set_exception(error)
        else:
            future.set_result((index, result))

    def read_states(self, states: tuple[ReadState, ...], applied: int) -> None:
        for state in states:
            future = self._reads.pop(state.context, None)
            if future is not None and not future.done():
                self._waiting_reads.append((state.index, future))
        self.serve_reads(applied)

    def serve_reads(self, applied: int) -> None:
        """Answer the reads whose ReadIndex is applied, with the index they read at."""
        waiting = []
        for index, future in self._waiting_reads:
            if future.done():
                continue
            if index <= applied:
                future.set_result(applied)
            else:
                waiting.append((index, future))
        self._waiting_reads = waiting

    def fail_all(self, reason: str) -> None:
        futures: list[asyncio.Future[tuple[int, object]] | asyncio.Future[int]]
        futures = [f for _, f in self._proposals.values()]
        futures += self._reads.values()
        futures += [f for _, f in self._waiting_reads]
        self._proposals.clear()
        self._reads.clear()
        self._waiting_reads.clear()
        for future in futures:
            if not future.done():
                future.set_exception(self._not_leader(reason))
