"""Small stores for tests: broker.conf keys and StoreConfig values with shrunk files.

RocketMQ's defaults preallocate 1 GiB commit log segments and 6,000,000-byte consume queue
files (``MessageStoreConfig``); tests shrink them so rolls and multi-file recovery happen in a
few messages and a full run does not fill the disk. One spelling of each, used by every test:

- :func:`small_store_properties`: ``store_properties`` (broker.conf keys) for a test broker;
- :func:`small_store_config`: a ``StoreConfig`` for a MessageStore opened directly;
- :func:`commit_log_config`: RocketMQ's defaults with small segments and a stopped clock;
- :func:`open_store` and :func:`new_msg`: a started store and a message to put in it;
- :func:`open_ha_store`, :func:`slave_linked` and :func:`commitlog_bytes`: a master or slave
  store linked in-process, the moment its link is up, and the log it holds.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from rocketq.common.message import MessageExt
from rocketq.store import FlushDiskType, MessageStore, StoreConfig
from rocketq.store.config import BrokerRole

MIB = 1024 * 1024
SMALL_COMMIT_LOG_BYTES = 8 * MIB
SMALL_CONSUME_QUEUE_BYTES = 6000  # 300 units of 20 bytes
SMALL_TIMER_LOG_BYTES = 52 * 1024 + 16  # 1024 timer units and a blank
STORE_TS = 1700000000123
SEGMENT_BYTES = 64 * 1024  # the commit log segments of small_store_config and commit_log_config


def small_store_properties(
    commit_log_bytes: int = SMALL_COMMIT_LOG_BYTES,
    consume_queue_bytes: int = SMALL_CONSUME_QUEUE_BYTES,
    **more: str,
) -> dict[str, str]:
    """broker.conf keys (RocketMQ's spelling, ``mapedFile...`` included) for a small store."""
    return {
        "mapedFileSizeCommitLog": str(commit_log_bytes),
        "mapedFileSizeConsumeQueue": str(consume_queue_bytes),
        "mappedFileSizeTimerLog": str(SMALL_TIMER_LOG_BYTES),
        **more,
    }


def ha_store_properties(commit_log_bytes: int = 64 * 1024, **more: str) -> dict[str, str]:
    """:func:`small_store_properties` for a master or slave: HA heartbeats every 200 ms (not
    5 s), so a link's loss and return show within a test."""
    return {**small_store_properties(commit_log_bytes), "haSendHeartbeatInterval": "200", **more}


def small_store_config(root: str | os.PathLike[str], **overrides: Any) -> StoreConfig:
    """A StoreConfig under ``root``: 64 KiB commit log segments, 100-unit consume queue files,
    a 1,000-slot index, SYNC_FLUSH; ``overrides`` replace any field."""
    base = dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=str(root),
        mapped_file_size_commit_log=SEGMENT_BYTES,
        mapped_file_size_consume_queue=100 * 20,
        max_hash_slot_num=1000,
        max_index_num=4000,
        flush_disk_type=FlushDiskType.SYNC_FLUSH,
        mapped_file_size_timer_log=SMALL_TIMER_LOG_BYTES,
    )
    return dataclasses.replace(base, **overrides)


def commit_log_config(
    root: str | os.PathLike[str], ts: int = STORE_TS, **overrides: Any
) -> StoreConfig:
    """RocketMQ's defaults but 64 KiB commit log segments and a clock stopped at ``ts``: for
    CommitLog tests whose records must come out byte for byte; ``overrides`` replace any field
    (a smaller segment, say)."""
    fields: dict[str, Any] = {"mapped_file_size_commit_log": SEGMENT_BYTES, **overrides}
    return dataclasses.replace(
        StoreConfig(), store_path_root_dir=str(root), clock_ms=lambda: ts, **fields
    )


def open_store(root: str | os.PathLike[str], **overrides: Any) -> MessageStore:
    """A loaded and started MessageStore with :func:`small_store_config`; shut it down."""
    store = MessageStore(small_store_config(root, **overrides))
    store.load()
    store.start()
    return store


def new_msg(
    topic: str = "TopicTest",
    queue_id: int = 0,
    body: bytes = b"hello",
    properties: dict[str, str] | None = None,
    **fields: Any,
) -> MessageExt:
    """A MessageExt with fixed born and store hosts and born time; ``fields`` override."""
    values: dict[str, Any] = {
        "born_timestamp": 1700000000000,
        "born_host": ("127.0.0.1", 54321),
        "store_host": ("127.0.0.1", 10911),
    }
    values.update(fields)
    return MessageExt(
        topic=topic, body=body, properties=dict(properties or {}), queue_id=queue_id, **values
    )


#: StoreConfig fields of a store linked in-process: the HA port any free one on 127.0.0.1,
#: heartbeats every 200 ms (not 5 s), a sync master waits 3 s for its slave
HA_STORE_FIELDS: dict[str, Any] = {
    "ha_listen_port": 0,
    "ha_listen_host": "127.0.0.1",
    "ha_send_heartbeat_interval_ms": 200,
    "sync_flush_timeout_ms": 3000,
}


def open_ha_store(root: str | os.PathLike[str], role: BrokerRole, **overrides: Any) -> MessageStore:
    """A loaded and started store with its HA service running: :func:`small_store_config`
    with :data:`HA_STORE_FIELDS`; ``overrides`` replace any field. Shut it down."""
    store = MessageStore(small_store_config(root, broker_role=role, **HA_STORE_FIELDS | overrides))
    store.load()
    store.start()
    store.start_ha()
    return store


def slave_linked(master: MessageStore) -> bool:
    """One slave linked and its first report read: the master knows where to start it (an
    empty slave that reports after a file roll is started at the master's last file)."""
    connections = list(master.ha_service.connections)
    return len(connections) == 1 and connections[0].slave_request_offset >= 0


def commitlog_bytes(store: MessageStore, end: int | None = None) -> bytes:
    """The store's commit log files joined, up to ``end`` (its max physical offset)."""
    folder = store.config.commit_log_dir
    end = store.get_max_phy_offset() if end is None else end
    data = b"".join(Path(folder, name).read_bytes() for name in sorted(os.listdir(folder)))
    return data[:end]
