"""The disk keys of GET_BROKER_RUNTIME_INFO: how full the commit log's and consume queues'
file systems are (``commitLogDiskRatio``, ``consumeQueueDiskRatio``, ``commitLogDirCapacity``)
and the store size, as DefaultMessageStore.getRuntimeInfo reports them."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

from rocketq.common.message_decoder import decode_message
from rocketq.store.clean import disk_used_ratio

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext


def disk_ratio(path: str) -> float:
    """The used ratio of the file system holding ``path``, as the store's clean-up sees it."""
    return disk_used_ratio(path)


def human_size(size: int) -> str:
    """RocketMQ's ``UtilAll.humanReadableByteCount(size, false)``: 1024-based, one decimal."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"


def store_dirs(controller: BrokerContext) -> tuple[str, str]:
    """The commit log directory and the consume queue directory of the broker's store."""
    store_config = controller.message_store.config
    return store_config.commit_log_dir, os.path.join(
        store_config.store_path_root_dir, "consumequeue"
    )


def disk_runtime_info(controller: BrokerContext) -> dict[str, str]:
    commit_log, consume_queue = store_dirs(controller)
    try:
        usage = shutil.disk_usage(commit_log)
        total, free = usage.total, usage.free
    except OSError:  # no commit log directory yet: java.io.File's getTotalSpace() says 0
        total = free = 0
    capacity = f"Total : {human_size(total)}, Free : {human_size(free)}."
    return {
        "earliestMessageTimeStamp": str(earliest_message_time(controller)),
        "commitLogDiskRatio": f"{disk_ratio(commit_log)}",
        "consumeQueueDiskRatio": f"{disk_ratio(consume_queue)}",
        "commitLogDirCapacity": capacity,
        "startAcceptSendRequestTimeStamp": "0",
        "pageCacheLockTimeMills": "0",
    }


def earliest_message_time(controller: BrokerContext) -> int:
    """Store time of the oldest message in the commit log (0 when it is empty), as
    ``earliestMessageTimeStamp``: mqadmin clusterList's #Hour is how long ago that was."""
    store = controller.message_store
    info = store.get_runtime_info()
    min_offset = int(info.get("commitLogMinOffset") or 0)
    if int(info.get("commitLogMaxOffset") or 0) <= min_offset:
        return 0
    record = store.select_one_message_by_offset(min_offset)
    if record is None:
        return 0
    try:
        return int(decode_message(record, check_crc=False, read_body=False).store_timestamp)
    except ValueError:
        return 0
