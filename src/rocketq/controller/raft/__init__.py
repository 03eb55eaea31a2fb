"""A sans-IO Raft, shaped like etcd-io/raft: ``RawNode.step``/``tick``/``propose``/``read_index``
feed it, ``RawNode.ready()`` hands back what to persist, send and apply, ``advance()`` confirms.

It imports no IO and nothing else of rocketq (an import-linter contract says so): the same code
runs inside the deterministic simulator (``rocketq.testing.raft_simulation``) and under asyncio.
"""

from rocketq.controller.raft.codec import MessageDecodeError, decode_message, encode_message
from rocketq.controller.raft.config import RaftConfig
from rocketq.controller.raft.message import (
    NONE,
    Entry,
    HardState,
    Message,
    MessageType,
    ReadState,
    Snapshot,
)
from rocketq.controller.raft.raw_node import RawNode, Ready, RestoredState
from rocketq.controller.raft.role import Role

__all__ = [
    "NONE",
    "Entry",
    "HardState",
    "Message",
    "MessageDecodeError",
    "MessageType",
    "RaftConfig",
    "RawNode",
    "ReadState",
    "Ready",
    "RestoredState",
    "Role",
    "Snapshot",
    "decode_message",
    "encode_message",
]
