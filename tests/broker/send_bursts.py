"""Bursts of single sends over a raw connection to a test broker, and what they left: the
replies' bytes, the records (``masked_commitlog``: the commitlog but for the fields that
name ports and the store time) and the send figures (the send tests' helpers)."""

from __future__ import annotations

import contextlib
import os
import struct
import types
from collections.abc import AsyncIterator
from pathlib import Path

from rocketq.broker.broker_stats_manager import TOPIC_PUT_NUMS, TOPIC_PUT_SIZE
from rocketq.broker.controller import BrokerController
from rocketq.broker.processors.send import SendMessageProcessor
from rocketq.common import native_record
from rocketq.common.message_decoder import decode_message
from rocketq.common.message_id import decode_message_id
from rocketq.common.record_layout import BLANK_MAGIC_CODE, BLANK_STRUCT, MIN_RECORD_SIZE
from rocketq.remoting import native_frames
from rocketq.remoting.codec import encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker
from rocketq.testing.store import MIB, small_store_properties
from rocketq.testing.wire import send_request
from tests.broker.raw_wire import one_write, raw_burst

WAIT_S = 10.0
V2 = RequestCode.SEND_MESSAGE_V2
SMALL = small_store_properties(MIB)


def processor_of(broker: BrokerController) -> SendMessageProcessor:
    fast = broker.remoting_server.fast_processor(RequestCode.SEND_MESSAGE_V2)
    assert isinstance(fast, types.MethodType)
    assert isinstance(fast.__self__, SendMessageProcessor)
    return fast.__self__


#: the paths a send parity test runs, (native frames and records, the C take): the C take and
#: figures; the Python take a send with the C frames; everything in Python
SEND_PATHS = ((True, True), (True, False), (False, False))


@contextlib.asynccontextmanager
async def broker_on_path(
    root: Path, native: bool, take_native: bool
) -> AsyncIterator[BrokerController]:
    """A broker (a 1 MiB store under ``root``) on the chosen send path."""
    native_frames.use(native)
    native_record.use(native)
    async with run_broker(root, store_properties=small_store_properties(MIB)) as broker:
        processor_of(broker).take_native = take_native
        yield broker


@contextlib.asynccontextmanager
async def taking_broker(root: Path) -> AsyncIterator[BrokerController]:
    """A broker on the native path whose send processor takes topic "Take" in C: the
    Python path creates it, then take sees it."""
    native_frames.use(True)
    native_record.use(True)
    async with run_broker(root, store_properties=small_store_properties(MIB)) as broker:
        for body in (b"create", b"seen"):
            await one_write(broker.broker_addr, [send_request("Take", body, code=V2)])
        yield broker


def rpc_count(broker: BrokerController) -> int:
    histogram = broker.rpc_latency_stats.snapshot().get(
        (RequestCode.SEND_MESSAGE_V2, ResponseCode.SUCCESS)
    )
    return 0 if histogram is None else sum(histogram.counts)


async def burst_on(
    broker: BrokerController, native: bool, n: int, topic: str = ""
) -> dict[str, object]:
    """A burst of ``n`` sends to a topic of its own on the chosen path, and what it left."""
    native_frames.use(native)
    topic = topic or f"Both{int(native)}"
    stats = broker.broker_stats_manager
    answers = processor_of(broker).answers
    before = (
        answers.native_answers,
        stats.put_message_times_total,
        sum(stats.put_latency_counts),
        rpc_count(broker),
    )
    requests = [
        send_request(topic, b"m%d" % i, tags="t", keys=f"k{i}", code=RequestCode.SEND_MESSAGE_V2)
        for i in range(n)
    ]
    raw, replies = await raw_burst(broker.broker_addr, requests)
    native_frames.use(False)  # the reference encoder re-encodes what came over the wire
    assert raw == b"".join(encode(r) for r in replies)
    by_opaque = {r.opaque: r for r in replies}
    ordered = [by_opaque[r.opaque] for r in requests]
    offsets = [decode_message_id(r.ext_fields["msgId"])[1] for r in ordered]
    store = broker.message_store
    assert store.wait_for_dispatch(WAIT_S)
    got = store.get_message("g", topic, 0, 0, n)
    records = [decode_message(b) for b in got.message_buffers]
    return {
        "native answers": answers.native_answers - before[0],
        "put times": stats.put_message_times_total - before[1],
        "put latencies": sum(stats.put_latency_counts) - before[2],
        "rpc latencies": rpc_count(broker) - before[3],
        "by type": stats.put_by_type[(topic, "Normal")],
        "topic stats": [
            (item.value, item.times)
            for name in (TOPIC_PUT_NUMS, TOPIC_PUT_SIZE)
            if (item := stats.sets[name].get(topic)) is not None
        ],
        "sizes": stats.message_sizes[topic],
        "codes": [r.code for r in ordered],
        "remarks": [r.remark for r in ordered],
        "fields": [
            {k: v for k, v in r.ext_fields.items() if k != "msgId"} | {"id": o - offsets[0]}
            for r, o in zip(ordered, offsets, strict=True)
        ],
        "records": [
            (
                m.body,
                m.properties,
                m.flag,
                m.sys_flag,
                m.queue_offset,
                m.commitlog_offset - offsets[0],
            )
            for m in records
        ],
    }


_MASKED = ((48, 56), (56, 64), (64, 72))  # BORNHOST, STORETIMESTAMP, STOREHOST (IPv4 records)


def masked_commitlog(broker: BrokerController) -> list[bytes]:
    """The broker's commitlog records (and blanks) in order, the masked fields zeroed."""
    store = broker.message_store
    folder = store.config.commit_log_dir
    data = b"".join(Path(folder, n).read_bytes() for n in sorted(os.listdir(folder)))
    end = store.get_max_phy_offset()
    out: list[bytes] = []
    pos = 0
    while pos < end:
        total, magic = BLANK_STRUCT.unpack_from(data, pos)
        record = bytearray(data[pos : pos + total])
        if magic != BLANK_MAGIC_CODE:
            assert total >= MIN_RECORD_SIZE
            (sys_flag,) = struct.unpack_from(">i", record, 36)
            assert sys_flag & 0x30 == 0  # IPv4 hosts: the masked positions hold
            for a, b in _MASKED:
                record[a:b] = bytes(b - a)
        else:
            record = record[:8]
        out.append(bytes(record))
        pos += total
    return out


def figures_of(broker: BrokerController) -> object:
    """The figures that do not depend on timing: counts, sizes, totals, histograms' counts."""
    stats = broker.broker_stats_manager
    rpc = broker.rpc_latency_stats.snapshot()
    return (
        sum(stats.put_latency_counts),
        stats.put_message_times_total,
        stats.put_message_size_total,
        dict(stats.put_by_type),
        dict(stats.message_sizes),
        {key: sum(h.counts) for key, h in rpc.items()},
    )
