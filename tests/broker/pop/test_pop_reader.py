"""The pop's read of records in memory (``pop_batch.read_in_memory``: the pull's C walk,
``MessageStore.get_message_body``) against ``get_message``, the reference: the same records
and next offset when it took every unit it walked (its queue offsets are then the range the
checkpoint records), and no answer (the reference reads) when a TAG filter skipped units or
the filter is SQL92."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.broker.pop.pop_batch import read_in_memory
from rocketq.broker.property_filter import message_filter_of
from rocketq.common import native_record
from rocketq.remoting.protocol.subscription import build_subscription_data
from rocketq.store.message_store import MessageStore
from rocketq.testing.store import new_msg, open_store

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
    pytest.mark.usefixtures("c_record_paths"),  # the C walk is the subject
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MessageStore]:
    s = open_store(tmp_path, flush_disk_type="ASYNC_FLUSH")
    for i in range(40):
        s.put_message(new_msg("T", 0, b"m%02d" % i, {"TAGS": "A" if i < 20 or i % 2 else "B"}))
    assert s.wait_for_dispatch()
    try:
        yield s
    finally:
        s.shutdown()


def test_a_read_that_took_every_unit_is_the_references_records_and_offsets(
    store: MessageStore,
) -> None:
    everything = message_filter_of(build_subscription_data("T", "*"))
    for offset, want in ((0, 32), (5, 32), (30, 32), (39, 1)):
        found = read_in_memory(store, "T", 0, offset, want, everything)
        reference = store.get_message("G", "T", 0, offset, want, everything)
        assert found is not None
        assert found.body is not None
        assert found.body == b"".join(reference.message_buffers)
        assert found.next_begin_offset == reference.next_begin_offset
        assert list(range(offset, found.next_begin_offset)) == reference.message_queue_offsets
        assert found.body_count == len(reference.message_buffers)


def test_a_read_whose_tag_filter_skipped_units_is_left_to_the_reference(
    store: MessageStore,
) -> None:
    only_a = message_filter_of(build_subscription_data("T", "A"))
    assert read_in_memory(store, "T", 0, 0, 10, only_a) is not None  # 0-19 are all A
    assert read_in_memory(store, "T", 0, 15, 10, only_a) is None  # 20, 22, ... are B
    reference = store.get_message("G", "T", 0, 15, 10, only_a)
    assert reference.message_queue_offsets[5:] == [21, 23, 25, 27, 29]


def test_a_sql92_filter_is_left_to_the_reference(store: MessageStore) -> None:
    sql = message_filter_of(build_subscription_data("T", "TAGS = 'A'", 0, "SQL92"))
    assert read_in_memory(store, "T", 0, 0, 10, sql) is None
