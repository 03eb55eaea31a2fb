"""A Wing-Gong linearizability checker (as Knossos does it) for one compare-and-set register.

An operation is (invoke time, response time or None when its outcome is unknown, kind,
arguments, result). The search linearizes, in some order consistent with real time, every
operation that completed, and those of unknown outcome that it needs; it memoizes (set of
linearized operations, register value) so small histories with a few concurrent clients check
in milliseconds. Histories are checked per register (linearizability is compositional).
"""

from __future__ import annotations

from dataclasses import dataclass

READ = "read"
CAS = "cas"
INFINITY = float("inf")


@dataclass(frozen=True, slots=True)
class Operation:
    op_id: int
    client: int
    kind: str
    key: int
    invoke_us: int
    response_us: float  # INFINITY when the outcome is unknown
    expected: int = 0
    new: int = 0
    result: object = None  # read: the value; cas: True / False; None when unknown


def step_model(op: Operation, value: int) -> int | None:
    """The register's value after ``op`` at ``value``, or None when ``op``'s result is
    impossible there."""
    if op.kind == READ:
        return value if op.result == value else None
    if op.result is None:
        return op.new if value == op.expected else value
    if op.result:
        return op.new if value == op.expected else None
    return value if value != op.expected else None


def is_linearizable(history: list[Operation], initial: int = 0) -> bool:
    ops = sorted(history, key=lambda o: o.invoke_us)
    must = sum(1 << i for i, op in enumerate(ops) if op.response_us != INFINITY)
    failed: set[tuple[int, int]] = set()

    def search(done: int, value: int) -> bool:
        if done & must == must:
            return True
        if (done, value) in failed:
            return False
        horizon = min(op.response_us for i, op in enumerate(ops) if not done >> i & 1)
        for i, op in enumerate(ops):
            if op.invoke_us > horizon:
                break
            if done >> i & 1:
                continue
            after = step_model(op, value)
            if after is not None and search(done | 1 << i, after):
                return True
        failed.add((done, value))
        return False

    return search(0, initial)
