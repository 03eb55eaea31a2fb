"""Crash-test writer: SYNC_FLUSH puts from several threads, each acknowledgement on stdout.

``python -m rocketq.testing.store_writer STORE_DIR CYCLE [THREADS]`` opens (and so recovers)
the store with 64 KiB commitlog segments, prints ``ready``, then puts until killed. After
each PUT_OK it prints ``ack <queue_id> <queue_offset> <body-hex>`` and flushes stdout, so
the parent knows exactly which messages were acknowledged. Topic ``CrashTopic``, 4 queues.
"""

from __future__ import annotations

import sys
import threading

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.store.config import StoreConfig
from rocketq.store.message_store import MessageStore
from rocketq.testing.store import small_store_config

TOPIC = "CrashTopic"
QUEUES = 4


def store_config(root: str) -> StoreConfig:
    """:func:`rocketq.testing.store.small_store_config` with 200-unit consume queue files."""
    return small_store_config(root, mapped_file_size_consume_queue=200 * 20)


def main() -> None:
    root, cycle = sys.argv[1], int(sys.argv[2])
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    store = MessageStore(store_config(root))
    store.load()
    store.start()
    out_lock = threading.Lock()
    print("ready", flush=True)

    def writer(w: int) -> None:
        n = 0
        while True:
            body = f"c{cycle}-w{w}-n{n}".encode() * (1 + n % 7)
            msg = MessageExt(
                topic=TOPIC,
                body=body,
                properties={mc.PROPERTY_KEYS: f"k{cycle}-{w}-{n}", mc.PROPERTY_TAGS: "T"},
                queue_id=(w + n) % QUEUES,
                born_timestamp=0,
                born_host=("127.0.0.1", 5000 + w),
                store_host=("127.0.0.1", 10911),
            )
            result = store.put_message(msg)
            if result.status.name == "PUT_OK" and result.append_result is not None:
                qid, qoff = msg.queue_id, result.append_result.queue_offset
                with out_lock:
                    sys.stdout.write(f"ack {qid} {qoff} {body.hex()}\n")
                    sys.stdout.flush()
            n += 1

    for w in range(threads):
        threading.Thread(target=writer, args=(w,), daemon=True).start()
    threading.Event().wait()


if __name__ == "__main__":
    main()
