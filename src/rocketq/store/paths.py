"""Paths under the store root (RocketMQ's StorePathConfigHelper)."""

from __future__ import annotations

import os

from rocketq.store.config import StoreConfig


def consume_queue_dir(root: str) -> str:
    return os.path.join(root, "consumequeue")


def index_dir(root: str) -> str:
    return os.path.join(root, "index")


def checkpoint_path(root: str) -> str:
    return os.path.join(root, "checkpoint")


def abort_path(root: str) -> str:
    return os.path.join(root, "abort")


def lock_path(root: str) -> str:
    return os.path.join(root, "lock")


def truncated_dir(root: str) -> str:
    """Where recovery keeps the bytes it cut (ZODB keeps the cut tail too)."""
    return os.path.join(root, "truncated")


def commit_log_dir(config: StoreConfig) -> str:
    return config.commit_log_dir


def fsync_dir(path: str) -> None:
    """Make a created/renamed/deleted directory entry durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
