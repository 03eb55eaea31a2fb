"""The checker's zombie acks, by the final epoch file: a send acknowledged in an epoch's range
after a later epoch's master had acknowledged one. An old master elected again later (its
acks in a later epoch's range) is not one; the runner's per-fault count took it for one (run
of 2026-11-29, ``--faults partition_master --seed 14``: 4 suspected, 0 by the epochs)."""

from __future__ import annotations

from rocketq.testing.failover.checker import zombie_acks
from rocketq.testing.failover.load import Ack

OLD, NEW = "127.0.0.1:1001", "127.0.0.1:1002"
#: epoch 1 from offset 0 (OLD), epoch 2 from 1000 (NEW), epoch 3 from 2000 (OLD again)
STARTS = [(0, 1), (1000, 2), (2000, 3)]


def ack(seq: int, phy: int, broker: str, sent_at: float, at: float) -> Ack:
    return Ack("broker-b", 0, seq, 0, seq, phy, broker, sent_at, at)


def test_an_old_master_elected_again_is_not_a_zombie() -> None:
    acks = [
        ack(1, 100, OLD, 1.0, 1.1),
        ack(2, 1100, NEW, 5.0, 5.1),  # epoch 2 served from 5.1
        ack(3, 2100, OLD, 9.0, 9.1),  # epoch 3: OLD elected again, after epoch 2
    ]
    assert zombie_acks(acks, STARTS) == []


def test_a_deposed_masters_ack_of_a_later_send_is_a_zombie() -> None:
    acks = [
        ack(1, 100, OLD, 1.0, 1.1),
        ack(2, 1100, NEW, 5.0, 5.1),
        ack(3, 200, OLD, 5.5, 5.6),  # epoch 1's range, sent after epoch 2 served
        ack(4, 300, OLD, 4.9, 5.7),  # sent before epoch 2 served: in flight, not a zombie
    ]
    assert zombie_acks(acks, STARTS) == [f"p0-3@200 by {OLD} (epoch 1)"]
