"""A broker's single sends on the C path (frames, SendPut, ``append_sends``, the C replies)
against the Python path (``ROCKETQ_NATIVE=0``: both switches off), the reference: the same
bursts to two fresh brokers leave the same commitlog, file rolls mid-burst included, byte
for byte but for the fields that name the broker's and the sender's ports and the store
time, and get the same answers."""

from __future__ import annotations

import asyncio
import random
import struct
import types
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.processors.send import SendMessageProcessor
from rocketq.common import native_record
from rocketq.common.message_id import decode_message_id
from rocketq.remoting import native_frames
from rocketq.remoting.codec import FrameDecoder, encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.store.commitlog_send import SendPut
from rocketq.testing import append_fuzz
from rocketq.testing.broker import run_broker
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request
from tests.broker.raw_wire import one_write
from tests.broker.send_bursts import masked_commitlog

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(
        native_frames.COMPILED is None or native_record.COMPILED is None,
        reason="rocketq._native not built",
    ),
]

SEGMENT = 64 * 1024
WAIT_S = 10.0


def processor_of(broker: BrokerController) -> SendMessageProcessor:
    fast = broker.remoting_server.fast_processor(RequestCode.SEND_MESSAGE_V2)
    assert isinstance(fast, types.MethodType)
    assert isinstance(fast.__self__, SendMessageProcessor)
    return fast.__self__


async def bursts_on(
    tmp_path: Path, native: bool, bursts: list[list[RemotingCommand]]
) -> tuple[list[bytes], list[object], int, int]:
    native_frames.use(native)
    native_record.use(native)
    props = small_store_properties(SEGMENT)
    async with run_broker(tmp_path / f"native{int(native)}", store_properties=props) as broker:
        answers: list[object] = []
        for burst in bursts:
            replies = await one_write(broker.broker_addr, burst)
            by_opaque = {r.opaque: r for r in replies}
            for request in burst:
                r = by_opaque[request.opaque]
                fields = dict(r.ext_fields)
                msg_id = fields.pop("msgId", None)
                offset = None if msg_id is None else decode_message_id(msg_id)[1]
                answers.append((r.code, r.remark, fields, offset))
        assert broker.message_store.wait_for_dispatch(WAIT_S)
        processor = processor_of(broker)
        return masked_commitlog(broker), answers, processor.native_reads, processor.split_reads


async def test_bursts_rolling_files_are_stored_and_answered_alike_on_both_paths(
    tmp_path: Path,
) -> None:
    bursts = [
        [
            send_request(
                f"Roll{i % 2}",
                bytes([i % 251]) * (700 + 13 * i),
                tags=f"t{i % 3}",
                keys=f"k{i}",
                queue_id=i % 4,
                code=RequestCode.SEND_MESSAGE_V2,
            )
            for i in range(start, start + 60)
        ]
        for start in (0, 60, 120)
    ]
    # a burst mixing what C takes with what Python keeps: a delay, a half, a refusal
    v2 = RequestCode.SEND_MESSAGE_V2
    mixed = [
        send_request("Roll0", b"plain", code=v2),
        send_request("Roll0", b"delayed", extra={"DELAY": "1"}, code=v2),
        send_request("Roll1", b"half", sys_flag=4, code=v2),
        send_request("Roll0", b"big", extra={"B": "v" * 32_760}, code=v2),
        send_request("Roll1", b"x" * 40_000, code=v2),
        send_request("Roll0", b"no wait", extra={"WAIT": "false"}, code=v2),
    ]
    native = await bursts_on(tmp_path, True, [*bursts, mixed])
    python = await bursts_on(tmp_path, False, [*bursts, mixed])
    records, answers, reads, split = native
    # the first send to each topic creates it on the Python path; of the mixed burst C reads
    # the plain one, the roll-sized one and WAIT=false; each in its read's split
    assert reads == 178 + 3
    assert split == reads
    assert python[2:] == (0, 0)
    assert len([r for r in records if len(r) == 8]) >= 2  # two files ended by a blank
    codes = [a[0] for a in answers]  # type: ignore[index]
    assert codes[:180] == [ResponseCode.SUCCESS] * 180
    assert (
        codes[180:]
        == [ResponseCode.SUCCESS] * 3 + [ResponseCode.MESSAGE_ILLEGAL] + [ResponseCode.SUCCESS] * 2
    )
    assert records == python[0]
    assert answers == python[1]


def test_a_producers_send_is_read_by_c_as_the_python_path_reads_it() -> None:
    compiled = native_frames.COMPILED
    assert compiled is not None
    extra = {"WAIT": "false", "u": "\u4e2d"}
    v2 = RequestCode.SEND_MESSAGE_V2
    request = send_request("T", b"body", tags="t", keys="k", extra=extra, queue_id=3, code=v2)
    assert request.ext_fields is not None
    fields = dict(request.ext_fields)
    put = compiled.send_put_of(
        fields, b"body", append_fuzz.RULES, SendPut, append_fuzz.BORN, append_fuzz.STORE
    )
    assert put is not None
    assert put == append_fuzz.send_put_reference(fields, b"body")
    assert put.wait_store_msg_ok is False
    assert put.properties.endswith(b"CLUSTER\x01DefaultCluster\x02")
    assert b"WAIT" not in put.properties
    # what the Python path must decide: C declines
    for change in ({"m": "true"}, {"e": "-1"}, {"f": "4"}, {"b": "%RETRY%g"}, {"e": "+3"}):
        assert (
            compiled.send_put_of(
                fields | change,
                b"",
                append_fuzz.RULES,
                SendPut,
                append_fuzz.BORN,
                append_fuzz.STORE,
            )
            is None
        ), change
    for key in "abcdefgh":
        less = {k: v for k, v in fields.items() if k != key}
        assert (
            compiled.send_put_of(
                less, b"", append_fuzz.RULES, SendPut, append_fuzz.BORN, append_fuzz.STORE
            )
            is None
        ), key


def test_random_sends_read_by_c_are_the_python_paths() -> None:
    rng = random.Random(2212)
    findings = [append_fuzz.check_send_put(rng) for _ in range(3000)]
    assert [f for f in findings if f] == []


async def test_a_burst_of_sends_cut_by_a_malformed_frame_is_answered_then_closed(
    tmp_path: Path,
) -> None:
    """The sends before a bad frame length in one write are stored and answered alike on
    both paths, then the broker closes that connection."""
    v2 = RequestCode.SEND_MESSAGE_V2
    warm = [send_request("Cut", b"first", code=v2)]  # creates the topic
    burst = [send_request("Cut", bytes([i]) * 100, queue_id=i % 4, code=v2) for i in range(5)]
    outcomes = []
    for native in (True, False):
        native_frames.use(native)
        native_record.use(native)
        props = small_store_properties(SEGMENT)
        async with run_broker(tmp_path / f"cut{int(native)}", store_properties=props) as broker:
            await one_write(broker.broker_addr, warm)
            host, port = broker.broker_addr.split(":")
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(b"".join(encode(r) for r in burst) + struct.pack(">i", 2) + b"xx")
            decoder = FrameDecoder()
            replies: list[RemotingCommand] = []
            async with asyncio.timeout(WAIT_S):
                while data := await reader.read(65536):  # to the broker's close
                    replies += decoder.feed(data)
            writer.close()
            assert broker.message_store.wait_for_dispatch(WAIT_S)
            codes = sorted((r.opaque, r.code, r.ext_fields.get("queueOffset")) for r in replies)
            split = processor_of(broker).split_reads
            outcomes.append((masked_commitlog(broker), [c[1:] for c in codes], split))
    native_outcome, python_outcome = outcomes
    # queues 0, 1, 2, 3, 0; queue 0 holds the first send already
    assert native_outcome[1] == [(ResponseCode.SUCCESS, str(o)) for o in (1, 0, 0, 0, 2)]
    assert native_outcome[2] == 5
    assert native_outcome[:2] == python_outcome[:2]


async def test_with_an_rpc_hook_the_sends_are_not_read_in_the_split(tmp_path: Path) -> None:
    """A hook (ACL, fencing) must see each request first: the read's split leaves the
    sends to the fast processor, which runs the hook (here one that lets all through)."""
    native_frames.use(True)
    native_record.use(True)
    seen: list[int] = []

    def hook(_channel: object, request: RemotingCommand) -> RemotingCommand | None:
        seen.append(request.opaque)
        return None

    v2 = RequestCode.SEND_MESSAGE_V2
    burst = [send_request("Hooked", bytes([i]) * 10, code=v2) for i in range(6)]
    async with run_broker(
        tmp_path / "hook", store_properties=small_store_properties(SEGMENT)
    ) as broker:
        broker.remoting_server.register_rpc_hook(hook)
        replies = await one_write(broker.broker_addr, burst)
        processor = processor_of(broker)
        assert [r.code for r in replies] == [ResponseCode.SUCCESS] * 6
        assert sorted(seen) == sorted(r.opaque for r in burst)
        assert processor.split_reads == 0
        assert processor.native_reads == 5  # the first created the topic


async def test_a_flush_of_c_read_sends_takes_the_lane_and_a_mixed_one_keeps_the_order(
    tmp_path: Path,
) -> None:
    """A flush of sends C read goes to the store and its answers without an object a put
    (``async_put_sends``, the batcher's lane); one that holds a send of the Python path
    (a delay) goes the general way, each send stored in the order of the read."""
    native_frames.use(True)
    native_record.use(True)
    v2 = RequestCode.SEND_MESSAGE_V2
    async with run_broker(tmp_path, store_properties=small_store_properties(SEGMENT)) as broker:
        batcher = processor_of(broker).put_batcher
        create = send_request("Lane", b"create", queue_id=0, code=v2)
        await one_write(broker.broker_addr, [create])
        flushes, lane = batcher.flushes, batcher.lane_flushes
        plain = [send_request("Lane", b"p%d" % i, queue_id=0, code=v2) for i in range(8)]
        replies = await one_write(broker.broker_addr, plain)
        assert [r.code for r in replies] == [ResponseCode.SUCCESS] * 8
        assert batcher.lane_flushes - lane == batcher.flushes - flushes >= 1
        flushes, lane = batcher.flushes, batcher.lane_flushes
        mixed = [
            send_request("Lane", b"first", queue_id=0, code=v2),
            send_request("Lane", b"delayed", extra={"DELAY": "1"}, code=v2),
            send_request("Lane", b"third", queue_id=0, code=v2),
            send_request("Lane", b"fourth", queue_id=0, code=v2),
        ]
        replies = await one_write(broker.broker_addr, mixed)
        assert [r.code for r in replies] == [ResponseCode.SUCCESS] * 4
        assert batcher.flushes - flushes > batcher.lane_flushes - lane  # a general flush
        by_opaque = {r.opaque: r for r in replies}
        offsets = [decode_message_id(by_opaque[r.opaque].ext_fields["msgId"])[1] for r in mixed]
        assert offsets == sorted(offsets)  # stored in the read's order
        queue_offsets = [int(by_opaque[r.opaque].ext_fields["queueOffset"]) for r in mixed]
        assert [queue_offsets[0], *queue_offsets[2:]] == [9, 10, 11]  # after create, p0-p7
