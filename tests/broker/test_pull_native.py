"""PULL_MESSAGE on the C path (``get_message_body``: the units walked and the records copied
in one call) against the Python path (``ROCKETQ_NATIVE=0``), the reference: the same pulls to
one broker give the same reply frames byte for byte, across commitlog and consume queue
rolls, with tag filters, at offsets too small, too big and at the queue's end, and they
leave the same BrokerStatsManager figures and committed offsets. QUERY_CONSUMER_OFFSET,
UPDATE_CONSUMER_OFFSET and HEART_BEAT are answered on the reader, without a task."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.common import native_record
from rocketq.remoting import native_frames
from rocketq.remoting.codec import decode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import create_topic, pull_request, request, send_request
from tests.broker.raw_wire import Wire

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
]

WAIT_S = 10.0
PER_QUEUE = 160
FLAG_COMMIT_OFFSET = 1
FLAG_SUBSCRIPTION = 4


def use_native(native: bool) -> None:
    native_frames.use(native)
    native_record.use(native)


async def fill(broker: BrokerController, wire: Wire) -> None:
    await create_topic([broker.broker_addr], "T", 2)
    for i in range(2 * PER_QUEUE):
        tag = "ABC"[i % 3] if i % 40 else "rare"
        body = bytes([i % 251]) * (300 + (i * 37) % 900)
        sent = send_request("T", body, tags=tag, queue_id=i % 2)
        reply = decode(await wire.call(sent))
        assert reply.code == ResponseCode.SUCCESS, reply.remark
    assert broker.message_store.wait_for_dispatch()


def pulls() -> list[RemotingCommand]:
    offsets = [-3, *range(0, PER_QUEUE, 5), PER_QUEUE - 1, PER_QUEUE, PER_QUEUE + 9]
    return [
        pull_request("G", "T", queue_id, offset, expression=expression, max_nums=max_nums)
        for queue_id in (0, 1)
        for offset in offsets
        for expression in ("*", "A", "B || C", "rare", "nope")
        for max_nums in (1, 32)
    ]


def stats_of(broker: BrokerController) -> tuple[int, int, int]:
    stats = broker.broker_stats_manager
    return (
        stats.get_message_times_total_found,
        stats.get_message_transfered_msg_count,
        stats.get_message_times_total_miss,
    )


async def test_pulls_answer_the_same_bytes_on_both_paths(tmp_path: Path) -> None:
    props = small_store_properties(64 * 1024, 50 * 20)  # rolls: 64 KiB files, 50-unit queues
    async with run_broker(tmp_path, store_properties=props) as broker:
        reader, writer = await asyncio.open_connection(*broker.broker_addr.split(":"))
        wire = Wire(reader, writer)
        try:
            await fill(broker, wire)
            codes: dict[int, int] = {}
            walked = 0
            for pull in pulls():
                use_native(False)
                before = stats_of(broker)
                python = await wire.call(pull)
                python_stats = tuple(b - a for a, b in zip(before, stats_of(broker), strict=True))
                use_native(True)
                before = stats_of(broker)
                compiled = await wire.call(pull)
                native_stats = tuple(b - a for a, b in zip(before, stats_of(broker), strict=True))
                assert compiled == python, pull.ext_fields
                assert native_stats == python_stats
                reply = decode(compiled)
                codes[reply.code] = codes.get(reply.code, 0) + 1
                f = pull.ext_fields
                walked += (
                    broker.message_store.get_message_body(
                        "T", int(f["queueId"]), int(f["queueOffset"]), int(f["maxMsgNums"]), None
                    )
                    is not None
                )
            assert set(codes) == {
                ResponseCode.SUCCESS,
                ResponseCode.PULL_NOT_FOUND,
                ResponseCode.PULL_OFFSET_MOVED,
                ResponseCode.PULL_RETRY_IMMEDIATELY,
            }
            assert walked >= 2 * (PER_QUEUE // 5) * 10  # the in-range pulls took the C path
        finally:
            writer.close()


async def test_a_pull_commits_its_offset_on_the_c_path(tmp_path: Path) -> None:
    use_native(True)
    async with run_broker(tmp_path) as broker:
        reader, writer = await asyncio.open_connection(*broker.broker_addr.split(":"))
        wire = Wire(reader, writer)
        try:
            await create_topic([broker.broker_addr], "T", 1)
            for i in range(40):
                await wire.call(send_request("T", b"m%d" % i, tags="A"))
            assert broker.message_store.wait_for_dispatch()
            flags = FLAG_SUBSCRIPTION | FLAG_COMMIT_OFFSET
            pull = pull_request("G", "T", 0, 32, sys_flag=flags, commit_offset=17)
            assert broker.message_store.get_message_body("T", 0, 32, 32, None) is not None
            reply = decode(await wire.call(pull))
            assert reply.code == ResponseCode.SUCCESS
            assert reply.ext_fields["nextBeginOffset"] == "40"
            assert broker.consumer_offset_manager.query_offset("G", "T", 0) == 17
        finally:
            writer.close()


@pytest.mark.parametrize(
    "code",
    [RequestCode.QUERY_CONSUMER_OFFSET, RequestCode.UPDATE_CONSUMER_OFFSET, RequestCode.HEART_BEAT],
)
async def test_offsets_and_heartbeats_are_fast_processors(tmp_path: Path, code: int) -> None:
    async with run_broker(tmp_path) as broker:
        assert broker.remoting_server.fast_processor(code) is not None


async def test_query_consumer_offset_answers_as_before(tmp_path: Path) -> None:
    async with run_broker(tmp_path) as broker:
        reader, writer = await asyncio.open_connection(*broker.broker_addr.split(":"))
        wire = Wire(reader, writer)
        try:
            await create_topic([broker.broker_addr], "T", 1)
            query = request(
                RequestCode.QUERY_CONSUMER_OFFSET, consumerGroup="G", topic="T", queueId=0
            )
            young = decode(await wire.call(query))
            assert (young.code, young.ext_fields["offset"]) == (ResponseCode.SUCCESS, "0")
            update = request(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                consumerGroup="G",
                topic="T",
                queueId=0,
                commitOffset=12,
            )
            assert decode(await wire.call(update)).code == ResponseCode.SUCCESS
            found = decode(await wire.call(query))
            assert (found.code, found.ext_fields["offset"]) == (ResponseCode.SUCCESS, "12")
            broker.message_store.find_consume_queue("T", 0)  # exists, still starts at 0
        finally:
            writer.close()
