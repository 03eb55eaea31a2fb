"""The Wing-Gong checker accepts linearizable register histories and rejects the others."""

from __future__ import annotations

from rocketq.testing.raft_simulation.linearizability import (
    CAS,
    INFINITY,
    READ,
    Operation,
    is_linearizable,
)


def cas(op_id: int, start: int, end: float, expected: int, new: int, ok: bool | None) -> Operation:
    return Operation(op_id, op_id, CAS, 0, start, end, expected, new, ok)


def read(op_id: int, start: int, end: float, value: int) -> Operation:
    return Operation(op_id, op_id, READ, 0, start, end, result=value)


def test_sequential_operations_that_follow_the_register_are_linearizable() -> None:
    assert is_linearizable([cas(1, 0, 1, 0, 5, True), read(2, 2, 3, 5), cas(3, 4, 5, 0, 6, False)])


def test_a_stale_read_after_a_completed_write_is_not_linearizable() -> None:
    assert not is_linearizable([cas(1, 0, 1, 0, 5, True), read(2, 2, 3, 0)])


def test_concurrent_operations_may_take_effect_in_either_order() -> None:
    assert is_linearizable([cas(1, 0, 10, 0, 5, True), read(2, 1, 2, 0), read(3, 3, 4, 5)])


def test_two_reads_cannot_see_a_write_appear_and_disappear() -> None:
    history = [cas(1, 0, 10, 0, 5, True), read(2, 1, 2, 5), read(3, 3, 4, 0)]
    assert not is_linearizable(history)


def test_an_operation_of_unknown_outcome_may_or_may_not_have_happened() -> None:
    assert is_linearizable([cas(1, 0, INFINITY, 0, 5, None), read(2, 5, 6, 5)])
    assert is_linearizable([cas(1, 0, INFINITY, 0, 5, None), read(2, 5, 6, 0)])
    assert not is_linearizable([cas(1, 0, INFINITY, 0, 5, None), read(2, 5, 6, 7)])


def test_a_failed_cas_must_have_seen_another_value() -> None:
    assert not is_linearizable([cas(1, 0, 1, 0, 5, False)])
