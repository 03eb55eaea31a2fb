"""Options, offsets JSON and planning arithmetic of the rocketq source (no SparkSession)."""

from __future__ import annotations

import json

import pytest

from rocketq.common.message import MessageQueue
from rocketq.errors import SparkOptionError
from rocketq.spark.topic.offset_reader import QueueRange, split_ranges
from rocketq.spark.topic.offsets import offsets_of, parse_offsets_json, stream_offset
from rocketq.spark.topic.options import ReadOptions, WriteOptions

pytest.importorskip("pyspark")

from rocketq.spark.topic.source import rate_limit

pytestmark = pytest.mark.spark
NS = {"nameserver": "127.0.0.1:9876"}


def mq(broker: str, queue_id: int, topic: str = "t") -> MessageQueue:
    return MessageQueue(topic, broker, queue_id)


def test_lower_cased_options_map_to_their_documented_names_and_types() -> None:
    opts = ReadOptions.parse(
        {
            **NS,
            "subscribe": "b, a,a",
            "maxoffsetspertrigger": "100",
            "failondataloss": "false",
            "maxtriggerdelay": "30s",
            "minoffsetspertrigger": "10",
        },
        streaming=True,
    )
    assert opts.subscribe == ("a", "b")
    assert opts.max_offsets_per_trigger == 100
    assert opts.fail_on_data_loss is False
    assert opts.max_trigger_delay_ms == 30_000
    assert opts.starting == "latest"  # the stream default, as Kafka's
    assert ReadOptions.parse({**NS, "topic": "x"}, streaming=False).starting == "earliest"


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"subscribe": "t", "colour": "red", "size": "2"}, "colour, size"),
        ({"subscribe": "t", "subscribepattern": "t.*"}, "subscribe, subscribePattern"),
        ({}, "none"),
        ({"subscribe": "t", "maxoffsetspertrigger": "x"}, "maxOffsetsPerTrigger"),
        ({"subscribe": "t", "maxoffsetspertrigger": "5", "minoffsetspertrigger": "9"}, "exceeds"),
        ({"subscribe": "t", "maxtriggerdelay": "1m"}, "needs minOffsetsPerTrigger"),
        ({"subscribe": "t", "startingoffsets": "{bad"}, "startingOffsets: not JSON"),
        ({"subscribe": "t", "endingoffsets": '{"t":{"b":{"0":-2}}}'}, "endingOffsets"),
        ({"subscribe": "t", "failondataloss": "maybe"}, "failOnDataLoss"),
        ({"subscribe": "t", "subscribepattern": "("}, "subscribe, subscribePattern"),
        ({"assign": '{"t": {"b": "0"}}'}, "list of queue ids"),
        (
            {"subscribe": "t", "subexpressiontype": "SQL92", "subexpression": "a >"},
            "not an SQL92 filter",
        ),
        ({"subscribe": "t", "subexpressiontype": "XPATH"}, "TAG or SQL92"),
        ({"subscribe": "t", "maxbytespertrigger": "0"}, "maxBytesPerTrigger must be at least 1"),
        (
            {"subscribe": "t", "startingtimestamp": "1", "startingoffsetsbytimestamp": "{}"},
            "contra",
        ),
    ],
)
def test_bad_or_contradictory_read_options_are_refused_with_their_names(
    options: dict[str, str], named: str
) -> None:
    with pytest.raises(SparkOptionError, match=named):
        ReadOptions.parse({**NS, **options}, streaming=True)


def test_a_batch_read_refuses_stream_only_options() -> None:
    with pytest.raises(SparkOptionError, match="consumerGroup apply only to a streaming read"):
        ReadOptions.parse({**NS, "subscribe": "t", "consumergroup": "g"}, streaming=False)
    with pytest.raises(SparkOptionError, match="startingOffsets=latest is not allowed"):
        ReadOptions.parse({**NS, "subscribe": "t", "startingoffsets": "latest"}, streaming=False)


def test_a_stream_refuses_batch_only_options_and_nameserver_is_required() -> None:
    with pytest.raises(SparkOptionError, match="endingOffsets apply only to a batch read"):
        ReadOptions.parse({**NS, "subscribe": "t", "endingoffsets": "latest"}, streaming=True)
    with pytest.raises(SparkOptionError, match="nameServer is required"):
        ReadOptions.parse({"subscribe": "t"}, streaming=True)


def test_write_options_choose_the_guarantee_and_a_producer_group_for_it() -> None:
    plain = WriteOptions.parse({**NS, "topic": "t"})
    assert plain.delivery_guarantee == "at_least_once"
    exact = WriteOptions.parse({**NS, "deliveryguarantee": "exactly_once", "topic": "t"})
    assert exact.delivery_guarantee == "exactly_once"
    assert exact.producer_group != plain.producer_group  # check-backs need a txn producer
    with pytest.raises(SparkOptionError, match="at_least_once or exactly_once"):
        WriteOptions.parse({**NS, "deliveryguarantee": "twice"})


def test_stream_offsets_are_sorted_json_that_round_trips() -> None:
    offsets = {mq("b", 10): 5, mq("a", 2): 7, mq("a", 0, "s"): 1}
    text = json.dumps(stream_offset(offsets, init={mq("a", 2): 3}))
    assert text.index('"init"') < text.index('"topics"') < text.index('"v"')
    assert text.index('"s"') < text.index('"t"', text.index('"topics"'))
    assert text.index('"2"') < text.index('"10"')  # queue ids in numeric order
    assert offsets_of(json.loads(text)) == offsets


def test_user_offsets_json_names_queues_by_broker_and_id() -> None:
    parsed = parse_offsets_json('{"t": {"a": {"0": 23, "1": -2}}}', "startingOffsets")
    assert parsed == {mq("a", 0): 23, mq("a", 1): -2}
    with pytest.raises(SparkOptionError, match="queue ids are digits"):
        parse_offsets_json('{"t": {"a": {"x": 1}}}', "startingOffsets")


def test_rate_limit_shares_the_cap_by_backlog_and_never_exceeds_it() -> None:
    begin = {mq("a", 0): 0, mq("a", 1): 100, mq("b", 0): 5}
    end = {mq("a", 0): 90, mq("a", 1): 110, mq("b", 0): 5}
    limited = rate_limit(begin, end, 25)
    assert sum(limited[m] - begin[m] for m in end) == 25
    assert limited[mq("a", 0)] - 0 > limited[mq("a", 1)] - 100 > 0
    assert limited[mq("b", 0)] == 5
    assert rate_limit(begin, end, 1000) == end


def test_split_ranges_honours_max_records_and_min_partitions_without_gaps() -> None:
    ranges = [QueueRange("t", "a", 0, 0, 10), QueueRange("t", "a", 1, 5, 6)]
    split = split_ranges(ranges, 3, None)
    assert [(r.start, r.end) for r in split if r.queue_id == 0] == [(0, 3), (3, 6), (6, 8), (8, 10)]
    many = split_ranges(ranges, None, 8)
    assert len(many) == 8
    covered = sorted((r.queue_id, o) for r in many for o in range(r.start, r.end))
    assert covered == [(0, o) for o in range(10)] + [(1, 5)]
