"""A read's split and take in one C call (``split_take``, ``RemotingChannel.on_read``'s fast
branch) against ``split_sends`` then ``take_sends`` and against the Python path, the
reference: the same sends taken, the same replies, records and figures, the same order; a
malformed frame after sends answers them, then closes that connection only."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import struct
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.common import native_record
from rocketq.remoting import native_frames
from rocketq.remoting.codec import MAX_FRAME_SIZE, FrameDecoder, encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing import take_fuzz
from rocketq.testing.frame_fuzz import SEND_SPEC
from rocketq.testing.wire import send_request
from tests.broker.raw_wire import Wire, one_write
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


def sends(topic: str, count: int, tag: bytes = b"") -> bytes:
    return b"".join(
        encode(send_request(topic, tag + b"%d" % i, queue_id=i % 4, code=V2)) for i in range(count)
    )


async def test_split_take_is_split_sends_then_take_sends(tmp_path: Path) -> None:
    """On a broker's own processor: a read of taken sends alone gives their count; a read
    with more gives split_sends' answer without the taken leading sends; a partial frame or
    a bad length gives the rest and the reason; a broker config other than the spec's gives
    None, nothing split or taken."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    async with taking_broker(tmp_path) as broker:
        processor = processor_of(broker)
        taker = processor.taker
        assert taker is not None
        batcher = processor.put_batcher
        config = broker.config
        channel = object()
        assert not batcher._puts  # nothing awaits below: the batcher's queues are the test's
        try:
            whole = sends("Take", 3)
            assert (
                compiled.split_take(whole, MAX_FRAME_SIZE, SEND_SPEC, channel, 9, taker, config)
                == 3
            )
            expected = compiled.split_sends(whole, MAX_FRAME_SIZE, SEND_SPEC)[0]
            assert batcher._puts == [item[1] for item in expected]
            assert [d.request.opaque for d in batcher._dones] == [i[0].opaque for i in expected]  # type: ignore[union-attr]

            mixed = (
                sends("Take", 2) + encode(send_request("Unseen", b"u", code=V2)) + sends("Take", 1)
            )
            items, _, _ = compiled.split_sends(mixed, MAX_FRAME_SIZE, SEND_SPEC)
            answer = compiled.split_take(
                mixed, MAX_FRAME_SIZE, SEND_SPEC, channel, 9, taker, config
            )
            assert isinstance(answer, tuple)
            rest, consumed, reason, taken = answer
            assert (consumed, reason, taken) == (len(mixed), None, 2)
            assert [(i[1], i[2]) for i in rest] == [(i[1], i[2]) for i in items[2:]]
            assert batcher._puts[3:] == [item[1] for item in items[:2]]

            roomy = compiled.split_take(whole, MAX_FRAME_SIZE, SEND_SPEC, channel, 1, taker, config)
            assert isinstance(roomy, tuple)
            assert (len(roomy[0]), roomy[1:]) == (2, (len(whole), None, 1))  # the room

            partial = whole + encode(send_request("Take", b"p", code=V2))[:-3]
            cut = compiled.split_take(partial, MAX_FRAME_SIZE, SEND_SPEC, channel, 9, taker, config)
            assert cut == ([], len(whole), None, 3)
            bad = whole + struct.pack(">i", 2) + b"xx"
            worded = compiled.split_take(bad, MAX_FRAME_SIZE, SEND_SPEC, channel, 9, taker, config)
            assert isinstance(worded, tuple)
            assert worded[0:2] == ([], len(whole))
            assert worded[3] == 3
            assert "below 4" in str(worded[2])

            queued = len(batcher._puts)
            broker.config = dataclasses.replace(config)  # the spec was made from the old one
            assert (
                compiled.split_take(whole, MAX_FRAME_SIZE, SEND_SPEC, channel, 9, taker, config)
                is None
            )
            assert len(batcher._puts) == queued
        finally:
            broker.config = config
            del batcher._puts[:], batcher._dones[:]
            batcher._lane_count = 0


def server_channels_taking(broker: BrokerController) -> list[bool]:
    """Which of the broker's connections take their next read in one C call."""
    return [c._taking is not None for c in broker.remoting_server.channels]


SYNC = [send_request("Reads", b"s%d" % i, queue_id=i % 2, code=V2) for i in range(6)]
BURST = [send_request("Reads", b"a%d" % i, code=V2) for i in range(3)]
BURST += [send_request("Fresh", b"new", code=V2)]
BURST += [send_request("Reads", b"b%d" % i, code=V2) for i in range(3)]
AFTER = send_request("Reads", b"after", code=V2)
CUT = [send_request("Reads", b"c%d" % i, queue_id=i % 4, code=V2) for i in range(5)]
OTHER = send_request("Reads", b"o", code=V2)


async def reads_on_one_connection(broker: BrokerController, taking: bool) -> list[object]:
    """Sync sends (a read each), a read of sends with a new topic inside, a config change,
    then sends cut by a malformed frame: the replies' (code, offset) in send order (the
    requests made once: the paths' records compare byte for byte)."""
    host, port = broker.broker_addr.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    wire = Wire(reader, writer)
    decoder = FrameDecoder()
    outcome: list[object] = []
    try:
        for cmd in SYNC:  # the first creates the topic; the rest, one read each
            reply = decoder.feed(await wire.call(cmd))[0]
            outcome.append(reply.ext_fields["queueOffset"])
        assert server_channels_taking(broker) == [taking]
        writer.write(b"".join(encode(r) for r in BURST))
        for cmd in BURST:
            reply = decoder.feed(await wire.frame_of(cmd.opaque))[0]
            outcome.append((reply.code, reply.ext_fields.get("queueOffset")))
        broker.config = dataclasses.replace(broker.config)  # the spec is made again
        outcome.append(decoder.feed(await wire.call(AFTER))[0].ext_fields["queueOffset"])
        assert server_channels_taking(broker) == [taking]
        writer.write(b"".join(encode(r) for r in CUT) + struct.pack(">i", 2) + b"xx")
        replies: list[RemotingCommand] = []
        async with asyncio.timeout(WAIT_S):
            while data := await reader.read(65536):  # to the broker's close
                replies += decoder.feed(data)
        by_opaque = {r.opaque: r for r in replies}
        outcome += [
            (by_opaque[c.opaque].code, by_opaque[c.opaque].ext_fields["queueOffset"]) for c in CUT
        ]
    finally:
        writer.close()
    return outcome


async def test_reads_of_one_connection_are_alike_on_every_path(tmp_path: Path) -> None:
    """One connection's reads: with the C take on, each read after the first is split and
    taken in one call; the replies, the records and the figures are the Python take's and
    the reference's (ROCKETQ_NATIVE=0's) alike, and another connection stays open."""
    outcomes = []
    for native, take_native in SEND_PATHS:
        root = tmp_path / f"reads{int(native)}{int(take_native)}"
        async with broker_on_path(root, native, take_native) as broker:
            split = processor_of(broker).split_reads
            answers = await reads_on_one_connection(broker, take_native)
            # the malformed frame closed that connection only: another one is served
            other = await one_write(broker.broker_addr, [OTHER])
            assert [r.code for r in other] == [ResponseCode.SUCCESS]
            assert broker.message_store.wait_for_dispatch(WAIT_S)
            if native:  # all but the two topic creations, split in their reads
                assert processor_of(broker).split_reads - split == 18
            outcomes.append((figures_of(broker), masked_commitlog(broker), answers))
    assert outcomes[0] == outcomes[1] == outcomes[2]
    answers = outcomes[0][2]
    assert answers[:6] == ["0", "0", "1", "1", "2", "2"]  # queues 0 and 1 in turn
    assert answers[6:13] == [(ResponseCode.SUCCESS, o) for o in ("3", "4", "5", "0", "6", "7", "8")]
    assert answers[13:] == ["9"] + [(ResponseCode.SUCCESS, o) for o in ("10", "3", "0", "0", "11")]


def test_split_take_is_the_reference_on_fuzzed_reads() -> None:
    rng = random.Random(2224)
    del take_fuzz.TAKEN[:]
    findings = [
        take_fuzz.check_split_take(rng, encode(send_request("T", b"x", code=V2)), SEND_SPEC)
        for _ in range(600)
    ]
    assert [f for f in findings if f] == []
    assert max(take_fuzz.TAKEN) >= 3  # some reads were taken, whole or in part
