"""Controller-mode replication in one process: stores that switch roles as the broker's
ReplicasManager would make them, and a hand-driven slave that speaks the autoswitch HA
protocol byte for byte (for golden and ack-rule tests)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import Any

from rocketq.store.config import BrokerRole
from rocketq.store.ha.autoswitch_frames import (
    MasterFrameDecoder,
    MasterHandshake,
    MasterTransfer,
    SlaveHandshake,
    encode_slave_ack,
    encode_slave_handshake,
)
from rocketq.store.ha.autoswitch_service import AutoSwitchHAService
from rocketq.store.message_store import MessageStore
from rocketq.testing.store import open_ha_store


def open_controller_mode_store(
    root: str | os.PathLike[str], broker_id: int, **overrides: Any
) -> MessageStore:
    """:func:`open_ha_store` with ``enableControllerMode``: no role until the test gives one
    (``autoswitch(store).change_to_master`` / ``change_to_slave``). Shut it down."""
    store = open_ha_store(root, BrokerRole.SYNC_MASTER, enable_controller_mode=True, **overrides)
    autoswitch(store).set_local_broker_id(broker_id)
    return store


def autoswitch(store: MessageStore) -> AutoSwitchHAService:
    service = store.ha_service
    assert isinstance(service, AutoSwitchHAService), "not a controller-mode store"
    return service


def ha_address(store: MessageStore) -> str:
    return f"127.0.0.1:{store.ha_service.listen_port}"


Frame = MasterHandshake | MasterTransfer


class HandDrivenSlave:
    """A slave socket the test drives: handshake, read frames, ack chosen offsets."""

    def __init__(self, master: MessageStore, broker_id: int, *, async_learner: bool = False):
        self.sock = socket.create_connection(("127.0.0.1", master.ha_service.listen_port), 5)
        self.sock.settimeout(5)
        self.decoder = MasterFrameDecoder(1 << 22)
        self.frames: list[Frame] = []
        hello = SlaveHandshake(broker_id, async_learner=async_learner)
        self.sock.sendall(encode_slave_handshake(hello))

    def read_until(self, done: Callable[[list[Frame]], bool], timeout_s: float = 10) -> list[Frame]:
        """Frames until ``done(all frames so far)``; the master's heartbeats keep it moving."""
        deadline = time.monotonic() + timeout_s
        while not done(self.frames):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no such frames within {timeout_s} s: {self.frames[-3:]}")
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("the master closed the link")
            self.frames.extend(self.decoder.feed(data))
        return self.frames

    def ack(self, offset: int) -> None:
        self.sock.sendall(encode_slave_ack(offset))

    def close(self) -> None:
        self.sock.close()


def transferred_up_to(offset: int) -> Callable[[list[Frame]], bool]:
    def done(frames: list[Frame]) -> bool:
        return any(
            isinstance(f, MasterTransfer) and f.offset + len(f.data) >= offset for f in frames
        )

    return done
