"""LocalFileOffsetStore: Java offsets.json (fastjson object keys), .bak fallback, increase-only."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.client.aio.offset_store import (
    LocalFileOffsetStore,
    OffsetTable,
    decode_offsets,
    encode_offsets,
)
from rocketq.common.message import MessageQueue
from rocketq.errors import ClientError

JAVA_PRETTY = """{
\t"offsetTable":{{
\t\t\t"brokerName":"broker-a",
\t\t\t"queueId":3,
\t\t\t"topic":"TopicTest"
\t\t}:25,{
\t\t\t"brokerName":"broker-a",
\t\t\t"queueId":0,
\t\t\t"topic":"TopicTest"
\t\t}:12
\t}
}"""


def test_a_java_pretty_printed_offsets_file_is_read() -> None:
    assert decode_offsets(JAVA_PRETTY) == {
        MessageQueue("TopicTest", "broker-a", 3): 25,
        MessageQueue("TopicTest", "broker-a", 0): 12,
    }


def test_offsets_are_written_with_message_queue_object_keys() -> None:
    text = encode_offsets({MessageQueue("T", "b", 1): 7})
    assert text == '{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:7}}'


def test_a_file_without_an_offset_table_is_refused() -> None:
    with pytest.raises(ClientError):
        decode_offsets('{"other":{}}')


@given(
    st.dictionaries(
        st.builds(
            MessageQueue,
            st.text("abcXYZ_%-|09", min_size=1, max_size=10),
            st.text("ab-c", min_size=1, max_size=6),
            st.integers(0, 64),
        ),
        st.integers(-1, 2**62),
        max_size=12,
    )
)
def test_encode_then_decode_gives_the_same_offsets(offsets: dict[MessageQueue, int]) -> None:
    assert decode_offsets(encode_offsets(offsets)) == offsets


def test_persist_keeps_the_previous_file_as_bak_and_load_falls_back_to_it(tmp_path: Path) -> None:
    mq = MessageQueue("T", "b", 0)
    store = LocalFileOffsetStore(tmp_path, "127.0.0.1@1", "G")
    store.update_offset(mq, 5, increase_only=False)
    store.persist_all({mq})
    store.update_offset(mq, 9, increase_only=False)
    store.persist_all({mq})
    assert store.path == tmp_path / "127.0.0.1@1" / "G" / "offsets.json"
    assert decode_offsets(store.path.with_name("offsets.json.bak").read_text()) == {mq: 5}
    store.path.write_text("torn")
    again = LocalFileOffsetStore(tmp_path, "127.0.0.1@1", "G")
    again.load()
    assert again.read(mq) == 5


def test_increase_only_updates_never_move_an_offset_back() -> None:
    table = OffsetTable()
    mq = MessageQueue("T", "b", 0)
    table.update_offset(mq, 10, increase_only=True)
    table.update_offset(mq, 4, increase_only=True)
    assert table.read(mq) == 10
    table.update_offset(mq, 4, increase_only=False)
    assert table.read(mq) == 4
    assert table.read(MessageQueue("T", "b", 1)) == -1
