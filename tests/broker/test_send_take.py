"""The take of a read's sends in one C call (``take_sends``) and a flush's figures counted in
C (``count_figures``) against the Python path, the reference: the same sends, the same
queues, the same order, the same figures."""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path

import pytest

from rocketq.broker.config import BrokerConfig
from rocketq.broker.put_batcher import PutBatcher
from rocketq.common import native_record
from rocketq.common.topic_config import PERM_READ
from rocketq.remoting import native_frames
from rocketq.remoting.channel import DeferredReply
from rocketq.remoting.codec import MAX_FRAME_SIZE, encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing import take_fuzz
from rocketq.testing.broker import run_broker
from rocketq.testing.frame_fuzz import SEND_SPEC
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request
from tests.broker.raw_wire import one_write
from tests.broker.send_bursts import (
    SEND_PATHS,
    broker_on_path,
    figures_of,
    masked_commitlog,
    processor_of,
    taking_broker,
)

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(
        native_frames.COMPILED is None or native_record.COMPILED is None,
        reason="rocketq._native not built",
    ),
]

V2 = RequestCode.SEND_MESSAGE_V2
WAIT_S = 10.0


async def test_take_sends_takes_the_leading_sends_as_take_does(tmp_path: Path) -> None:
    """On a broker's own processor: the sends of a known topic are queued with their
    DeferredReply (its slots stored, started now), up to the room, the first send it does
    not take (a topic not yet seen, a queue out of range) stops it; none when the broker is
    not writable or the topic's config changed."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    async with taking_broker(tmp_path) as broker:
        processor = processor_of(broker)
        taker = processor.taker
        assert taker is not None
        batcher = processor.put_batcher
        reads, split = processor.native_reads, processor.split_reads
        frames = [send_request("Take", b"%d" % i, queue_id=i % 4, code=V2) for i in range(3)]
        frames += [send_request("Unseen", b"u", code=V2), send_request("Take", b"4", code=V2)]
        data = b"".join(encode(f) for f in frames)
        items = compiled.split_sends(data, MAX_FRAME_SIZE, SEND_SPEC)[0]
        assert [type(item) for item in items] == [tuple] * 5
        channel = object()
        # nothing awaits between these calls: the batcher's queues are the test's alone
        assert not batcher._puts
        try:
            before = time.perf_counter()
            assert compiled.take_sends(items, channel, 100, taker) == 3  # stops at "Unseen"
            after = time.perf_counter()
            assert batcher._puts == [item[1] for item in items[:3]]
            dones = batcher._dones
            assert all(type(d) is DeferredReply for d in dones)
            assert [d.request for d in dones] == [item[0] for item in items[:3]]  # type: ignore[union-attr]
            assert all(d.channel is channel for d in dones)  # type: ignore[union-attr]
            assert all(before <= d.started <= after for d in dones)  # type: ignore[union-attr]
            assert batcher._lane_count == 3
            assert (processor.native_reads, processor.split_reads) == (reads + 3, split + 3)
            assert compiled.take_sends(items[1:], channel, 2, taker) == 2  # the room
            out_of_range = send_request("Take", b"q", queue_id=1000, code=V2)
            far = compiled.split_sends(encode(out_of_range), MAX_FRAME_SIZE, SEND_SPEC)[0]
            assert compiled.take_sends(far + items, channel, 100, taker) == 0
            del batcher._puts[:], batcher._dones[:]
            batcher._lane_count = 0
            config = broker.config
            broker.config = dataclasses.replace(config, broker_permission=PERM_READ)
            assert compiled.take_sends(items, channel, 100, taker) == 0
            broker.config = config
            table = broker.topic_config_manager.topic_config_table
            table["Take"] = dataclasses.replace(table["Take"])  # a new config: take looks again
            assert compiled.take_sends(items, channel, 100, taker) == 0
            assert not batcher._puts
            assert not batcher._dones
        finally:
            del batcher._puts[:], batcher._dones[:]
            batcher._lane_count = 0


def test_a_deferred_reply_class_of_another_shape_is_called() -> None:
    """A subclass (its own __init__ may do more) is built by calling it, not by its slots."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    built: list[object] = []

    class Traced(DeferredReply):
        __slots__ = ()

        def __init__(self, channel: object, request: RemotingCommand) -> None:
            super().__init__(channel, request)  # type: ignore[arg-type]
            built.append(request)

    items = compiled.split_sends(
        encode(send_request("T", b"x", code=V2)), MAX_FRAME_SIZE, SEND_SPEC
    )[0]
    takes = {"T": (table_config := object(), 8)}
    broker = take_fuzz.TakeBroker(BrokerConfig())
    batcher = PutBatcher(take_fuzz._no_store)
    counters = take_fuzz.TakeCounters()
    taker = (takes, {"T": table_config}, broker, Traced, batcher, counters, 2)
    assert compiled.take_sends(items, None, 1, taker) == 1
    assert type(batcher._dones[0]) is Traced
    assert built == [items[0][0]]
    # a broker without its config: C takes nothing and leaves the error to the Python take
    no_config = (takes, {"T": table_config}, object(), Traced, batcher, counters, 2)
    assert compiled.take_sends(items, None, 1, no_config) == 0
    assert len(batcher._puts) == 1


async def test_a_read_with_a_send_take_leaves_keeps_the_order(tmp_path: Path) -> None:
    """A send C does not take (a new topic, created by the Python path) in the middle of a
    read: it and the sends after it go the Python way, stored in the read's order."""
    native_frames.use(True)
    native_record.use(True)
    async with run_broker(tmp_path, store_properties=small_store_properties(1 << 20)) as broker:
        await one_write(broker.broker_addr, [send_request("Order", b"create", code=V2)])
        processor = processor_of(broker)
        split = processor.split_reads
        burst = [send_request("Order", b"a%d" % i, code=V2) for i in range(3)]
        burst += [send_request("Fresh", b"new", code=V2)]
        burst += [send_request("Order", b"b%d" % i, code=V2) for i in range(3)]
        replies = await one_write(broker.broker_addr, burst)
        assert [r.code for r in replies] == [ResponseCode.SUCCESS] * 7
        by_opaque = {r.opaque: r for r in replies}
        offsets = [int(by_opaque[r.opaque].ext_fields["queueOffset"]) for r in burst]
        assert offsets == [1, 2, 3, 0, 4, 5, 6]
        assert processor.split_reads - split == 6  # all but the creating one
        assert broker.message_store.wait_for_dispatch(WAIT_S)


async def test_the_figures_of_bursts_are_equal_on_both_paths(tmp_path: Path) -> None:
    bursts = [
        [
            send_request(f"Fig{i % 3}", bytes([i]) * (100 + 997 * (i % 7)), code=V2, queue_id=i % 4)
            for i in range(start, start + 40)
        ]
        for start in (0, 40)
    ]
    bursts.append([send_request("Fig0", b"lone", code=V2)])
    outcomes = []
    # C take and figures; the Python take a send with the C frames; everything in Python
    for native, take_native in SEND_PATHS:
        root = tmp_path / f"fig{int(native)}{int(take_native)}"
        async with broker_on_path(root, native, take_native) as broker:
            answers = []
            for burst in bursts:
                replies = await one_write(broker.broker_addr, burst)
                assert [r.code for r in replies] == [ResponseCode.SUCCESS] * len(burst)
                by_opaque = {r.opaque: r for r in replies}
                answers += [by_opaque[r.opaque].ext_fields["queueOffset"] for r in burst]
            assert broker.message_store.wait_for_dispatch(WAIT_S)
            assert (processor_of(broker).taker is not None) is take_native
            outcomes.append((figures_of(broker), masked_commitlog(broker), answers))
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert outcomes[0][0][1] == 81  # type: ignore[index]


def test_count_figures_counts_as_the_python_loops() -> None:
    rng = random.Random(2222)
    findings = [take_fuzz.check_count_figures(rng) for _ in range(1500)]
    assert [f for f in findings if f] == []


def test_take_sends_takes_as_the_reference_on_fuzzed_reads() -> None:
    rng = random.Random(2223)
    del take_fuzz.TAKEN[:]
    findings = [
        take_fuzz.check_take_sends(rng, encode(send_request("T", b"x", code=V2)), SEND_SPEC)
        for _ in range(600)
    ]
    assert [f for f in findings if f] == []
    assert max(take_fuzz.TAKEN) >= 3  # some reads were taken, whole or in part
