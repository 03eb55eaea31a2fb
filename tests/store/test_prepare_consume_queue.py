"""MessageStore.prepare_consume_queue: a queue's first consume-queue file made ahead of its
first message, the same file and units as without it, and nothing for queues it must not
touch."""

from __future__ import annotations

import os
from pathlib import Path

from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore, PutMessageStatus
from rocketq.store.config import BrokerRole
from rocketq.testing.store import new_msg, open_store


def queue_dir(store: MessageStore, topic: str, queue_id: int) -> str:
    return os.path.join(store.config.store_path_root_dir, "consumequeue", topic, str(queue_id))


def units(store: MessageStore, topic: str, queue_id: int) -> list[tuple[int, int, int] | None]:
    cq = store.find_consume_queue(topic, queue_id, create=False)
    assert cq is not None
    return [cq.get_unit(i) for i in range(cq.get_max_offset_in_queue())]


def test_a_prepared_queue_has_its_file_before_its_first_message_and_the_same_units(
    tmp_path: Path,
) -> None:
    prepared, plain = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    try:
        for store in (prepared, plain):
            assert store.put_message(new_msg("T", 0)).status is PutMessageStatus.PUT_OK
            assert store.wait_for_dispatch()
        assert prepared.prepare_consume_queue("T", 1)
        assert os.listdir(queue_dir(prepared, "T", 1)) == ["0" * 20]
        assert not os.path.exists(queue_dir(plain, "T", 1))
        assert prepared.get_max_offset_in_queue("T", 1) == 0
        assert not prepared.prepare_consume_queue("T", 1)  # once
        for store in (prepared, plain):
            for i in range(3):
                assert (
                    store.put_message(new_msg("T", 1, body=b"m%d" % i)).status
                    is PutMessageStatus.PUT_OK
                )
            assert store.wait_for_dispatch()
        assert units(prepared, "T", 1) == units(plain, "T", 1)
        assert len(units(prepared, "T", 1)) == 3
        assert prepared.get_min_offset_in_queue("T", 1) == 0
        found = prepared.get_message("G", "T", 1, 0, 32)
        assert [decode_message(b).body for b in found.message_buffers] == [b"m0", b"m1", b"m2"]
    finally:
        prepared.shutdown()
        plain.shutdown()


def test_nothing_is_prepared_for_a_written_queue_a_topic_without_messages_or_a_slave(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "m")
    slave = open_store(tmp_path / "s", broker_role=BrokerRole.SLAVE)
    try:
        assert not store.prepare_consume_queue("Empty", 0)  # no queue of it has a message
        assert not os.path.exists(queue_dir(store, "Empty", 0))
        assert store.put_message(new_msg("T", 0)).status is PutMessageStatus.PUT_OK
        assert store.wait_for_dispatch()
        assert not store.prepare_consume_queue("T", 0)  # has its file
        assert store.get_max_offset_in_queue("T", 0) == 1
        assert not slave.prepare_consume_queue("T", 1)
    finally:
        store.shutdown()
        slave.shutdown()
