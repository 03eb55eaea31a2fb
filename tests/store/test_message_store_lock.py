from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from rocketq.common.topic import topic_max_length, validate_topic
from rocketq.errors import StoreLockedError
from rocketq.store import MessageStore, StoreConfig


def check_topic(topic: str) -> bool:
    return validate_topic(topic, topic_max_length(topic)) is None


HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
print("locked", flush=True)
sys.stdin.read()
"""


def test_second_process_cannot_open_a_locked_store(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        store = MessageStore(dataclasses.replace(StoreConfig(), store_path_root_dir=str(tmp_path)))
        with pytest.raises(StoreLockedError, match="already started") as refused:
            store.load()
        assert f"held by process {holder.pid} (" in str(refused.value)
    finally:
        holder.kill()
        holder.communicate(timeout=10)


def test_topic_names_follow_rocketmq_rules() -> None:
    assert check_topic("TopicTest")
    assert check_topic("%RETRY%group_1")
    assert not check_topic("bad topic")
    assert not check_topic("a" * 128)
    assert check_topic("%DLQ%" + "a" * 200)
    assert not check_topic("")
