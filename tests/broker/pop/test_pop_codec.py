"""The C POP codecs (``rocketq._native._pop``, pop.c) against their Python references: a
BATCH_ACK_MESSAGE body read by ``batch_ack_body`` is what ``decode_batch_ack_body`` reads, for
every body a client writes (C must read those) and every edited one (C reads it the same or
declines, and the reference words the error); a found pop's extFields built by
``pop_answer_fields`` are ``PopMessageResponseHeader.to_ext_fields()``'s, string for string;
the switch (``ROCKETQ_NATIVE=0``, ``native_record.use``) selects the reference."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketq.broker.pop import pop_codec
from rocketq.common import native_record
from rocketq.common.extra_info import topic_mark
from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol.pop_headers import (
    BatchAck,
    decode_batch_ack_body,
    encode_batch_ack_body,
)
from rocketq.testing import pop_fuzz

pytestmark = pytest.mark.skipif(pop_codec.COMPILED is None, reason="rocketq._native not built")

PLAIN_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=20)
LONG = st.integers(-(2**63) + 1, 2**63 - 1)
BATCH_ACKS = st.builds(
    BatchAck,
    consumer_group=PLAIN_TEXT,
    topic=PLAIN_TEXT,
    retry=st.sampled_from(("0", "1", "2")),
    start_offset=LONG,
    queue_id=st.integers(-1, 1023),
    revive_queue_id=st.integers(0, 999),
    pop_time=LONG,
    invisible_time=LONG,
    bit_set=st.lists(st.integers(0, 300), unique=True, max_size=64).map(
        lambda bits: tuple(sorted(bits))
    ),
)


@pytest.fixture(autouse=True)
def _restore_switch() -> Iterator[None]:
    was = native_record.RECORD is not None
    yield
    native_record.use(was)


def c_read(body: bytes) -> tuple[str, list[BatchAck]] | None:
    assert pop_codec.COMPILED is not None
    return pop_codec.COMPILED.batch_ack_body(body, BatchAck)


@settings(max_examples=300, deadline=None)
@given(acks=st.lists(BATCH_ACKS, max_size=5), broker=PLAIN_TEXT)
def test_c_reads_every_body_a_client_writes_as_the_reference_does(
    acks: list[BatchAck], broker: str
) -> None:
    body = encode_batch_ack_body(broker, acks)
    got = c_read(body)
    if b"\\" in body:  # a '"' or '\' in a name is escaped: the reference reads those
        assert got is None or got == decode_batch_ack_body(body)
        return
    assert got == decode_batch_ack_body(body) == (broker, acks)


def test_the_long_names_spaces_and_missing_fields_are_read_as_the_reference_reads_them() -> None:
    bodies = [
        b'{"acks":[{"bitSet":"Bw==","consumerGroup":"G","invisibleTime":60000,"popTime":5,'
        b'"queueId":1,"retry":"1","reviveQueueId":2,"startOffset":7,"topic":"T"}],'
        b'"brokerName":"b"}',
        b' { "acks" : [ { "b" : "AQ==" , "c" : "G" } , { } ] , "brokerName" : "b" } \n',
        b'{"brokerName":"b"}',
        b'{"acks":[],"brokerName":"b"}',
        b'{"acks":[{"b":"","so":-3,"q":0}]}',
    ]
    for body in bodies:
        got = c_read(body)
        assert got is not None, body
        assert got == decode_batch_ack_body(body), body
    assert c_read(bodies[1]) == (
        "b",
        [
            BatchAck(
                consumer_group="G", topic="", retry="0", start_offset=0, queue_id=0,
                revive_queue_id=0, pop_time=0, invisible_time=0, bit_set=(0,),
            ),
            BatchAck(
                consumer_group="", topic="", retry="0", start_offset=0, queue_id=0,
                revive_queue_id=0, pop_time=0, invisible_time=0, bit_set=(),
            ),
        ],
    )  # fmt: skip


@pytest.mark.parametrize(
    "body",
    [
        b'{"acks":[{"c":"G\\u0041"}],"brokerName":"b"}',  # an escape
        '{"acks":[{"c":"é"}],"brokerName":"b"}'.encode(),  # not ASCII
        b'{"acks":[{"c":"G","c":"H"}],"brokerName":"b"}',  # a key twice
        b'{"acks":[{"c":"G","consumerGroup":"H"}]}',  # both names of a field
        b'{"acks":[{"zz":1}],"brokerName":"b"}',  # a key the reader does not know
        b'{"acks":[{"so":1.0}]}',  # a fraction
        b'{"acks":[{"so":1e3}]}',  # an exponent
        b'{"acks":[{"so":9223372036854775808}]}',  # past 64 bits
        b'{"acks":[{"so":"7"}]}',  # a number as a string
        b'{"acks":[{"c":null}]}',  # null
        b'{"acks":[{"b":"AQ="}]}',  # base64 padding cut
        b'{"acks":[{"b":"A=Q="}]}',  # padding inside
        b'{"acks":[{"b":"AQ*="}]}',  # not base64
        b'{"acks":[1]}',  # an item not an object
        b'{"acks":[{"c":"G"}],"brokerName":"b"} x',  # text after the object
        b'{"acks":[{"c":"G"}',  # cut
        b"[]",
        b"{}",
        b"",
        b'{"acks":[{"so":01}]}',  # a leading zero
    ],
)
def test_c_declines_what_is_not_plain_and_the_reference_decides(body: bytes) -> None:
    assert c_read(body) is None
    native_record.use(True)
    try:
        native = pop_codec.read_batch_ack_body(body)
    except (RemotingCommandError, ValueError) as exc:
        native = type(exc)  # type: ignore[assignment]
    try:
        reference = decode_batch_ack_body(body)
    except (RemotingCommandError, ValueError) as exc:
        reference = type(exc)  # type: ignore[assignment]
    assert native == reference


def test_the_switch_selects_the_reference() -> None:
    body = encode_batch_ack_body("b", [pop_fuzz.random_batch_ack(random.Random(3))])
    native_record.use(False)
    assert pop_codec._native() is None
    assert pop_codec.read_batch_ack_body(body) == decode_batch_ack_body(body)
    native_record.use(True)
    assert pop_codec._native() is pop_codec.COMPILED


ENTRIES = st.lists(
    st.tuples(
        st.sampled_from(("T", "%RETRY%G_T", "%RETRY%G+T")),
        st.integers(0, 1023),
        LONG,
        st.lists(LONG, max_size=40),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(
    entries=ENTRIES,
    values=st.tuples(LONG, LONG, st.integers(0, 999), st.integers(0, 2**40)),
    order=st.one_of(st.none(), PLAIN_TEXT),
)
def test_c_builds_a_found_pops_fields_as_the_reference_does(
    entries: list[tuple[str, int, int, list[int]]],
    values: tuple[int, int, int, int],
    order: str | None,
) -> None:
    marked = [(topic_mark(t), q, so, offs) for t, q, so, offs in entries]
    assert pop_codec.COMPILED is not None
    got = pop_codec.COMPILED.pop_answer_fields(*values, marked, order)
    expected = pop_codec.pop_answer_fields_reference(*values, entries, order)
    assert got == expected
    assert got is not None
    assert list(got) == list(expected)  # the same order on the wire


def test_c_declines_answer_fields_no_pop_makes() -> None:
    assert pop_codec.COMPILED is not None
    build = pop_codec.COMPILED.pop_answer_fields
    assert build(1, 2, 3, 4, [("0", 1, 2**64, [1])], None) is None
    assert build(1, 2, 3, 4, [("0", "1", 2, [1])], None) is None  # type: ignore[list-item]
    assert build(1, 2, 3, 4, [("0", 1, 2, (1,))], None) is None  # type: ignore[list-item]
    assert build(1, 2, 3, 4, [("é", 1, 2, [1])], None) is None
    assert build(True, 2, 3, 4, [("0", 1, 2, [1])], None) is None


def test_a_short_fuzz_run_finds_no_difference() -> None:
    rng = random.Random(random.randrange(1 << 31))
    for _ in range(2000):
        seed = rng.randrange(1 << 62)
        for check in (pop_fuzz.check_batch_ack_body, pop_fuzz.check_pop_answer_fields):
            assert check(random.Random(seed)) is None, seed


def test_the_fuzzers_bodies_reach_the_c_reader() -> None:
    """The random bodies are read by C (not all declined), or the fuzz would test nothing."""
    rng = random.Random(7)
    read = sum(c_read(pop_fuzz.random_body(rng)) is not None for _ in range(200))
    assert read > 30
    assert json.loads(pop_fuzz.random_body(random.Random(1)))  # JSON, as a client writes it
