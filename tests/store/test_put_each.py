"""MessageStore.async_put_each: separate puts in one call, a result each."""

from __future__ import annotations

from pathlib import Path

from rocketq.common.message_decoder import decode_message, encode_message
from rocketq.common.properties import encode_properties
from rocketq.store import FlushDiskType
from rocketq.store.message_writer import PutRequest
from rocketq.store.results import GetMessageStatus, PutMessageStatus
from rocketq.testing.record_paths import on_both
from rocketq.testing.store import new_msg, open_store
from rocketq.testing.wait import until_sync

WAIT_S = 10.0


def test_puts_of_one_call_get_a_result_each_and_a_failed_put_spoils_no_other(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    try:
        too_big = b"x" * (store.config.max_message_size + 1)
        each = store.async_put_each(
            [
                PutRequest(new_msg(body=b"first")),
                PutRequest(new_msg(body=too_big)),
                PutRequest(new_msg(queue_id=-1)),
                PutRequest(new_msg(body=b"second")),
            ]
        )
        statuses = [r.status for r in each.results]
        assert statuses == [
            PutMessageStatus.PUT_OK,
            PutMessageStatus.MESSAGE_ILLEGAL,
            PutMessageStatus.MESSAGE_ILLEGAL,
            PutMessageStatus.PUT_OK,
        ]
        assert each.durable is None
        assert each.waiting == []
        first, second = each.results[0].append_result, each.results[3].append_result
        assert first is not None
        assert second is not None
        assert (first.queue_offset, second.queue_offset) == (0, 1)
        assert second.wrote_offset == first.wrote_offset + first.wrote_bytes
        assert store.wait_for_dispatch(WAIT_S)
        got = store.get_message("g", "TopicTest", 0, 0, 32)
        assert got.status is GetMessageStatus.FOUND
        assert [decode_message(b).body for b in got.message_buffers] == [b"first", b"second"]
    finally:
        store.shutdown()


def test_sync_flush_puts_that_wait_complete_after_one_group_commit(tmp_path: Path) -> None:
    store = open_store(tmp_path)  # SYNC_FLUSH
    try:
        each = store.async_put_each(
            [
                PutRequest(new_msg(body=b"a")),
                PutRequest(new_msg(body=b"b"), wait_store_msg_ok=False),
                PutRequest(new_msg(body=b"c")),
            ]
        )
        assert each.waiting == [0, 2]  # the WAIT=false put is answered once appended
        assert each.results[1].status is PutMessageStatus.PUT_OK
        assert each.durable is not None
        assert each.durable.result(WAIT_S) is PutMessageStatus.PUT_OK
        last = each.results[2].append_result
        assert last is not None
        flushed = store.commit_log.mapped_file_queue.flushed_where
        assert flushed >= last.wrote_offset + last.wrote_bytes
    finally:
        store.shutdown()


def test_passed_through_properties_give_the_same_record_as_the_map(tmp_path: Path) -> None:
    props = {"TAGS": "tagA", "KEYS": "k1 k2", "UNIQ_KEY": "ABC", "CLUSTER": "DefaultCluster"}
    msg = new_msg(properties=props)
    assert encode_message(new_msg(), encode_properties(props)) == encode_message(msg)
    store = open_store(tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    try:
        each = store.async_put_each(
            [PutRequest(new_msg(), properties=encode_properties(props)), PutRequest(msg)]
        )
        assert [r.status for r in each.results] == [PutMessageStatus.PUT_OK] * 2
        assert store.wait_for_dispatch(WAIT_S)
        got = store.get_message("g", "TopicTest", 0, 0, 32)
        stored = [decode_message(b).properties for b in got.message_buffers]
        tail = len(encode_properties(props)) + 2  # the properties and their length
        assert got.message_buffers[0][-tail:] == got.message_buffers[1][-tail:]
        assert stored[0] == stored[1]
        assert stored[0]["TAGS"] == "tagA"
        assert stored[0]["KEYS"] == "k1 k2"
    finally:
        store.shutdown()


def test_passed_through_properties_over_32k_are_refused_with_their_status(tmp_path: Path) -> None:
    store = open_store(tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    try:
        huge = encode_properties({"BIG": "v" * 32_800})
        each = store.async_put_each(
            [PutRequest(new_msg(), properties=huge), PutRequest(new_msg(body=b"ok"))]
        )
        assert each.results[0].status is PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
        assert each.results[1].status is PutMessageStatus.PUT_OK
    finally:
        store.shutdown()


def test_puts_of_one_call_are_dispatched_without_waiting_for_the_reput_timer(
    tmp_path: Path,
) -> None:
    store = open_store(
        tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH, reput_fallback_wait_ms=60_000
    )
    try:
        for round_ in range(20):
            store.async_put_each([PutRequest(new_msg(body=b"r%d" % round_))] * 3)
            # the reput is woken after the append, so it finds the records at once
            assert until_sync(lambda: store.dispatch_behind_bytes() == 0, WAIT_S)
    finally:
        store.shutdown()


def test_given_properties_bytes_encode_the_same_record_on_the_c_and_python_paths() -> None:
    props = {"TAGS": "tagA", "KEYS": "k1", "CLUSTER": "DefaultCluster"}
    raw = encode_properties(props)
    python, compiled = on_both(lambda: bytes(encode_message(new_msg(), raw)))
    assert python == compiled
    assert python == ("ok", bytes(encode_message(new_msg(properties=props))))
    too_long = b"K\x01" + b"v" * 40_000 + b"\x02"
    python, compiled = on_both(lambda: encode_message(new_msg(), too_long))
    assert python[0] != "ok"  # refused on both paths (the store maps it to its status)
    assert compiled[0] != "ok"
