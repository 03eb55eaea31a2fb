"""``ClientWorkload``: clients issuing compare-and-set and ReadIndex reads through a leader, and
the history the linearizability checker reads.

A client has one operation in flight. It sends to a node that believes it leads (a stale leader
included: that is the point); a refusal is no operation at all and the client retries soon. An
operation that gets no answer within the timeout ends with an unknown outcome: a
compare-and-set may still take effect later, a read is dropped from the history.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from rocketq.testing.raft_simulation.linearizability import (
    CAS,
    INFINITY,
    READ,
    Operation,
    is_linearizable,
)
from rocketq.testing.raft_simulation.register import CasCommand

KEY_COUNT = 2
VALUE_COUNT = 4


@dataclass(slots=True)
class Pending:
    client: int
    node: int
    kind: str
    key: int
    expected: int
    new: int
    invoke_us: int


@dataclass(slots=True)
class ClientWorkload:
    rng: random.Random
    timeout_us: int = 3_000_000
    next_op: int = 1
    inflight: dict[int, Pending] = field(default_factory=dict)
    history: list[Operation] = field(default_factory=list)
    refused: int = 0

    def new_operation(self, client: int, node: int, now: int) -> tuple[int, Pending]:
        rng = self.rng
        kind = READ if rng.random() < 0.4 else CAS
        op = Pending(
            client,
            node,
            kind,
            rng.randrange(KEY_COUNT),
            rng.randrange(VALUE_COUNT),
            rng.randrange(VALUE_COUNT),
            now,
        )
        op_id = self.next_op
        self.next_op += 1
        return op_id, op

    @staticmethod
    def command(op_id: int, op: Pending) -> CasCommand:
        return CasCommand(op_id, op.key, op.expected, op.new)

    def complete(self, op_id: int, node: int, result: object, now: int) -> int | None:
        """``node`` answered ``op_id``; the client to schedule next, or None."""
        op = self.inflight.get(op_id)
        if op is None or op.node != node:
            return None
        del self.inflight[op_id]
        self._record(op_id, op, now, result)
        return op.client

    def time_out(self, op_id: int) -> int | None:
        op = self.inflight.pop(op_id, None)
        if op is None:
            return None
        if op.kind == CAS:
            self._record(op_id, op, INFINITY, None)
        return op.client

    def finish(self) -> None:
        for op_id in list(self.inflight):
            self.time_out(op_id)

    def _record(self, op_id: int, op: Pending, response: float, result: object) -> None:
        self.history.append(
            Operation(
                op_id, op.client, op.kind, op.key, op.invoke_us, response, op.expected, op.new,
                result,
            )
        )  # fmt: skip

    def check(self) -> str | None:
        """None when every register's history is linearizable, else which one is not."""
        for key in range(KEY_COUNT):
            ops = [op for op in self.history if op.key == key]
            if not is_linearizable(ops):
                lines = "\n".join(f"  {op}" for op in sorted(ops, key=lambda o: o.invoke_us))
                return f"history of register {key} is not linearizable:\n{lines}"
        return None

    @property
    def completed(self) -> int:
        return sum(1 for op in self.history if op.response_us != INFINITY)
