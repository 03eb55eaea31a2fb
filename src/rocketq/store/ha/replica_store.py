"""ReplicaStore: what replication uses of the message store (MessageStore satisfies it).

The HA service reads the master's commitlog through ``commit_log``; the HA client on a slave
reports ``get_max_phy_offset`` and appends what it receives with ``append_to_commit_log``.
Typing HA against this protocol, not against MessageStore, keeps the store package free of
import loops (MessageStore builds the HAService).
"""

from __future__ import annotations

from typing import Protocol

from rocketq.store.commitlog import CommitLog
from rocketq.store.config import StoreConfig
from rocketq.store.recovery import RecoverableStore


class ReplicaStore(Protocol):
    config: StoreConfig
    commit_log: CommitLog

    def get_max_phy_offset(self) -> int: ...

    def append_to_commit_log(self, start_offset: int, data: bytes) -> bool: ...


class ControllerModeStore(ReplicaStore, RecoverableStore, Protocol):
    """What controller-mode replication uses of the MessageStore: appends and truncation."""
