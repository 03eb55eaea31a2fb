"""Shared helpers for MessageStore tests (need rocketq.common and helper-1's store modules)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from rocketq.common.message import MessageExt
from rocketq.store import FlushDiskType, MessageStore, StoreConfig

STORE_TS = 1700000000123


def small_config(root: Path, **kw: Any) -> StoreConfig:
    base = dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=str(root),
        mapped_file_size_commit_log=64 * 1024,
        mapped_file_size_consume_queue=100 * 20,
        max_hash_slot_num=1000,
        max_index_num=4000,
        flush_disk_type=FlushDiskType.SYNC_FLUSH,
    )
    return dataclasses.replace(base, **kw)


def open_store(root: Path, **kw: Any) -> MessageStore:
    store = MessageStore(small_config(root, **kw))
    store.load()
    store.start()
    return store


def new_msg(
    topic: str = "TopicTest",
    queue_id: int = 0,
    body: bytes = b"hello",
    properties: dict[str, str] | None = None,
    **kw: Any,
) -> MessageExt:
    fields: dict[str, Any] = {
        "born_timestamp": 1700000000000,
        "born_host": ("127.0.0.1", 54321),
        "store_host": ("127.0.0.1", 10911),
    }
    fields.update(kw)
    return MessageExt(
        topic=topic, body=body, properties=dict(properties or {}), queue_id=queue_id, **fields
    )
