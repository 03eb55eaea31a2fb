"""The topic reader's columnar decode of pull bodies against its row path, on real brokers.

``read_range`` (pull bodies to Arrow columns, ``pull_body``) and ``pull_range`` (one
``MessageExt`` per record, then ``schema.topic_row``) read the same ranges; the tables must be
equal row for row and column for column, for plain, tagged, compressed and property-less
messages, sub-ranges, a tag filter, and pulls capped by the broker or not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from rocketq.client.blocking import Producer
from rocketq.common import native_record
from rocketq.common.message import Message, MessageQueue
from rocketq.errors import DecodeError
from rocketq.spark.schema import RecordBatchBuilder, topic_row
from rocketq.spark.topic.offset_reader import OffsetReader, QueueRange
from rocketq.spark.topic.options import ReadOptions
from rocketq.spark.topic.pull_body import body_batches, record_starts
from rocketq.spark.topic.pull_client import PullClient
from rocketq.spark.topic.range_reader import ReadSettings, pull_range, read_range, subscription_of
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import SMALL_STORE, send_many, wait_visible

pytestmark = [pytest.mark.spark, pytest.mark.timeout(120)]


def ranges_of(namesrv: str, topic: str) -> list[QueueRange]:
    options = ReadOptions.parse({"nameServer": namesrv, "subscribe": topic}, streaming=False)
    offsets = OffsetReader(options)
    mqs = offsets.queues()
    return offsets.plan(offsets.earliest(mqs), offsets.latest(mqs))


def columnar(r: QueueRange, settings: ReadSettings) -> Any:
    return pa.Table.from_batches(list(read_range(r, settings)), schema=row_table([]).schema)


def row_table(msgs: list[Any], broker: str = "") -> Any:
    builder = RecordBatchBuilder()
    for msg in msgs:
        builder.append(topic_row(msg, broker))
    return pa.Table.from_batches([builder.flush()])


def assert_paths_agree(r: QueueRange, settings: ReadSettings) -> int:
    got = columnar(r, settings)
    expected = row_table(list(pull_range(r, settings)), r.broker)
    assert got.num_rows == expected.num_rows
    assert got.to_pylist() == expected.to_pylist()
    return int(got.num_rows)


def send_mixed(producer: Producer, topic: str) -> None:
    """Every fourth message compressed (a body over 4 KiB), some without keys or tags."""
    results = send_many(producer, topic, 40)
    queues = producer.fetch_publish_message_queues(topic)
    for i in range(24):
        body = (f"big-{i}-" * 1000).encode() if i % 4 == 0 else f"bare-{i}".encode()
        results.append(producer.send(Message(topic=topic, body=body), message_queue=queues[i % 4]))
    wait_visible(producer, results)


def test_columnar_read_equals_the_row_path_for_mixed_messages_and_sub_ranges(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_mixed(producer, topic)
    settings = ReadSettings(name_server=cluster.namesrv_addr)
    ranges = ranges_of(cluster.namesrv_addr, topic)
    assert sum(assert_paths_agree(r, settings) for r in ranges) == 64
    for r in ranges:  # part of a queue, across the compressed records
        part = QueueRange(r.topic, r.broker, r.queue_id, r.start + 3, r.end - 2)
        assert assert_paths_agree(part, settings) == part.end - part.start
    small = ReadSettings(name_server=cluster.namesrv_addr, pull_batch_size=4)
    assert sum(assert_paths_agree(r, small) for r in ranges) == 64


def test_columnar_read_keeps_only_the_subscribed_tags(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_mixed(producer, topic)
    settings = ReadSettings(name_server=cluster.namesrv_addr, sub_expression="even")
    tables = [columnar(r, settings) for r in ranges_of(cluster.namesrv_addr, topic)]
    assert sum(t.num_rows for t in tables) == 20
    assert {tag for t in tables for tag in t.column("tags").to_pylist()} == {"even"}
    for r in ranges_of(cluster.namesrv_addr, topic):
        assert_paths_agree(r, settings)


def test_a_body_cut_mid_record_decodes_its_whole_records_and_leaves_the_rest_to_the_row_decoder(
    cluster: BackgroundCluster, producer: Producer, topic: str
) -> None:
    send_many(producer, topic, 8)
    client = PullClient.for_name_server(cluster.namesrv_addr)
    mq = MessageQueue(topic, "broker-a", 0)
    settings = ReadSettings(name_server=cluster.namesrv_addr)
    _result, body = client.pull_later(mq, subscription_of(topic, settings), 0, 32).result(10)
    whole = pa.Table.from_batches(body_batches(body, "broker-a"))
    assert whole.num_rows == 2
    with pytest.raises(DecodeError):
        body_batches(body[:-5], "broker-a")
    assert_record_walks_agree(body)


def assert_record_walks_agree(body: bytes) -> None:
    """The C walk (``_native``'s ``record_starts``) finds the starts and end that
    ``pull_body.record_starts`` does, for every cut of ``body`` and a broken magic code."""
    compiled = native_record.COMPILED
    assert compiled is not None, "the native module is built for the tests"
    starts, _stop = record_starts(body)
    assert len(starts) == 2
    broken = bytearray(body)
    broken[starts[1] + 4] ^= 0xFF
    small = bytearray(body)
    small[starts[1] : starts[1] + 4] = (90).to_bytes(4, "big")  # under MIN_RECORD_SIZE
    cases = [body[:cut] for cut in range(len(body) + 1)] + [bytes(broken), bytes(small)]
    for case in cases:
        expected, stop = record_starts(case)
        raw, native_stop = compiled.record_starts(case)
        assert np.frombuffer(raw, dtype=np.int64).tolist() == expected
        assert native_stop == stop
    assert record_starts(bytes(broken)) == ([0], starts[1])


def test_a_broker_with_a_raised_transfer_cap_answers_a_pull_of_1024_in_one_response(
    tmp_path: Path,
) -> None:
    props = {**SMALL_STORE, "maxTransferCountOnMessageInMemory": "1024"}
    with (
        BackgroundCluster(tmp_path, ("broker-a",), props) as cluster,
        Producer(
            "PULL_CAP_PRODUCER", namesrv_addr=cluster.namesrv_addr, instance_name="cap"
        ) as producer,
    ):
        cluster.create_topic("CapTopic", queues=1)
        mq = producer.fetch_publish_message_queues("CapTopic")[0]
        sent = [
            producer.send(Message("CapTopic", body=b"x" * 100), message_queue=mq)
            for _ in range(300)
        ]
        wait_visible(producer, sent)
        client = PullClient(cluster.namesrv_addr)
        try:
            settings = ReadSettings(name_server=cluster.namesrv_addr)
            sub = subscription_of("CapTopic", settings)
            result, _body = client.pull_later(mq, sub, 0, 1024).result(10)
            assert result.next_begin_offset == 300  # the default cap would give 32
            (r,) = ranges_of(cluster.namesrv_addr, "CapTopic")
            assert assert_paths_agree(r, settings) == 300
        finally:
            client.close()
