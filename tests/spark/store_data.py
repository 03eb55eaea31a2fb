"""Small multi-segment stores for the store-source tests, written by the real MessageStore.

Bodies vary in size; about one in eight carries a magic code (v1, v2 or BLANK) so that the
resynchronisation of byte-range splits is exercised; keys, tags and UNIQ_KEYs vary too.
"""

from __future__ import annotations

import random
from pathlib import Path

from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.record_layout import (
    BLANK_MAGIC_CODE,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
)
from rocketq.store.config import FlushDiskType, StoreConfig
from rocketq.store.message_store import MessageStore
from rocketq.testing.store import small_store_config

TOPICS = ("Orders", "Payments", "Audit")
QUEUES = 4
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
MAGICS = tuple(
    m.to_bytes(4, "big") for m in (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, BLANK_MAGIC_CODE)
)


def store_config(root: Path) -> StoreConfig:
    """``small_store_config`` (64 KiB segments) with smaller consume queue files (20 units)
    and index (64 slots, 256 entries), so a few hundred messages span several of each, and
    RocketMQ's default ASYNC_FLUSH."""
    return small_store_config(
        root,
        mapped_file_size_consume_queue=20 * 20,
        max_hash_slot_num=64,
        max_index_num=256,
        store_host=("127.0.0.1", 10911),
        flush_disk_type=FlushDiskType.ASYNC_FLUSH,
    )


def body_for(rng: random.Random, n: int) -> bytes:
    body = rng.randbytes(rng.randint(0, 1500))
    if n % 8 == 3:
        at = rng.randint(0, len(body))
        body = body[:at] + rng.choice(MAGICS) + body[at:]
    return body


def message_for(rng: random.Random, n: int) -> MessageExt:
    props: dict[str, str] = {"UNIQ_KEY": f"U{n:08d}"} if n % 3 else {}
    if n % 5:
        props["KEYS"] = f"k{n} order-{n % 17}"
    if n % 4:
        props["TAGS"] = f"Tag{n % 3}"
    props["note"] = "x" * (n % 11)
    return MessageExt(
        topic=TOPICS[n % len(TOPICS)],
        body=body_for(rng, n),
        properties=props,
        queue_id=n % QUEUES,
        born_timestamp=1_700_000_000_000 + n,
        born_host=("10.0.0.7", 40000 + n % 100),
        store_host=("127.0.0.1", 10911),
        reconsume_times=n % 3,
    )


def write_store(
    root: Path, count: int, seed: int = 7, *, transactional: bool = False
) -> list[MessageExt]:
    """Put ``count`` messages through a real MessageStore, shut it down; returns what was sent.

    ``transactional``: every 23rd message is a prepared half and every 37th a rollback
    marker (no consume queue unit; a rollback gets no index keys either), and every 41st
    waits in SCHEDULE_TOPIC_XXXX (its unit's tags code is the delivery time)."""
    rng = random.Random(seed)
    store = MessageStore(store_config(root))
    store.load()
    store.start()
    sent = []
    try:
        for n in range(count):
            msg = message_for(rng, n)
            if transactional and n % 23 == 5:
                msg.sys_flag = MessageSysFlag.TRANSACTION_PREPARED_TYPE
            if transactional and n % 37 == 6:
                msg.sys_flag = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
            if transactional and n % 41 == 7 and not msg.sys_flag:
                msg.topic, msg.queue_id = SCHEDULE_TOPIC, 1  # delay level 2: tags code = due time
                msg.properties["DELAY"] = "2"
            result = store.put_message(msg)
            assert result.status.name == "PUT_OK", result
            sent.append(msg)
        assert store.wait_for_dispatch(30.0)
    finally:
        store.shutdown()
    return sent


def store_decoded(root: Path) -> dict[int, MessageExt]:
    """Every message as the store itself serves it (consume queue + get_message), by offset."""
    from rocketq.common.message_decoder import decode_messages

    store = MessageStore(store_config(root))
    store.load()
    out: dict[int, MessageExt] = {}
    try:
        for cq in store.consume_queues.all_queues():
            offset = 0
            while True:
                got = store.get_message("g", cq.topic, cq.queue_id, offset, 64)
                if not got.message_buffers:
                    break
                for msg in decode_messages(b"".join(got.message_buffers)):
                    out[msg.commitlog_offset] = msg
                offset = got.next_begin_offset
    finally:
        store.shutdown()
    return out
