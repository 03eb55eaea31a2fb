"""Crash-test writer for the commitlog warm-up (store/warm.py): puts, then a warm, then a kill.

``python -m rocketq.testing.warm_writer STORE_DIR COUNT`` opens (and so recovers) a store with
:data:`SEGMENT` commitlog segments and a :data:`AHEAD` warm-ahead window, puts ``COUNT``
messages (SYNC_FLUSH), printing ``ack <queue_id> <queue_offset> <body-hex>`` after each
PUT_OK, then waits until the warm-up has populated the window past the write position and
prints ``warmed <max_phy_offset> <warmed_offset>``; the parent kills it with SIGKILL there.
"""

from __future__ import annotations

import sys
import threading

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.store.config import StoreConfig
from rocketq.store.message_store import MessageStore
from rocketq.testing.store import small_store_config
from rocketq.testing.wait import until_sync

TOPIC = "WarmTopic"
QUEUES = 2
SEGMENT = 1024 * 1024
AHEAD = 256 * 1024


def store_config(root: str) -> StoreConfig:
    """:func:`rocketq.testing.store.small_store_config` with 1 MiB segments and the window."""
    return small_store_config(
        root, mapped_file_size_commit_log=SEGMENT, commit_log_warm_ahead_bytes=AHEAD
    )


def main() -> None:
    root, count = sys.argv[1], int(sys.argv[2])
    store = MessageStore(store_config(root))
    store.load()
    store.start()
    for n in range(count):
        body = f"warm-{n}-".encode() * (1 + n % 50)
        msg = MessageExt(
            topic=TOPIC,
            body=body,
            properties={mc.PROPERTY_KEYS: f"k{n}"},
            queue_id=n % QUEUES,
            born_timestamp=0,
            born_host=("127.0.0.1", 5000),
            store_host=("127.0.0.1", 10911),
        )
        result = store.put_message(msg)
        if result.status.name == "PUT_OK" and result.append_result is not None:
            qoff = result.append_result.queue_offset
            sys.stdout.write(f"ack {msg.queue_id} {qoff} {body.hex()}\n")
    end = store.get_max_phy_offset()
    warm = store.warm_service
    # the window is refilled once it is down by a step: at least AHEAD minus a step is ahead
    if not until_sync(lambda: warm.warmed_offset >= end + AHEAD - warm.step, 30.0):
        sys.stdout.write(f"not warmed {end} {warm.warmed_offset}\n")
    sys.stdout.write(f"warmed {end} {warm.warmed_offset}\n")
    sys.stdout.flush()
    threading.Event().wait()


if __name__ == "__main__":
    main()
