"""The replies of a burst of stored sends built in one C call (``send_answer``) against the
Python path, the reference: the same reply bytes, stored records and stats on both paths, and
every send the C answer does not take answered by the Python path."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.processors.send_answer import reply_pieces
from rocketq.broker.processors.send_results import put_response
from rocketq.common import native_record
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_message
from rocketq.common.message_id import (
    host_to_bytes,
    message_id_from_host_bytes,
)
from rocketq.remoting import native_frames
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codec import FrameDecoder, encode, encode_head
from rocketq.remoting.protocol.codes import RequestCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.store.results import (
    AppendMessageResult,
    AppendMessageStatus,
    PutMessageResult,
    PutMessageStatus,
)
from rocketq.testing.broker import run_broker
from rocketq.testing.flush_fuzz import FuzzDeferred, answer_flush_reference
from rocketq.testing.wire import send_request
from tests.broker.send_bursts import SMALL, WAIT_S, burst_on, processor_of, raw_burst

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(native_frames.COMPILED is None, reason="rocketq._native not built"),
]

INT32 = [0, 1, -1, 7, 2**31 - 1, -(2**31)]
INT64 = [0, 1, -1, 4096, 2**31, 2**63 - 1, -(2**63), 123_456_789_012]


@pytest.fixture(autouse=True)
def _restore_path() -> Iterator[None]:
    before = native_frames.FRAMES is not None
    yield
    native_frames.use(before)


def python_reply(broker: BrokerController, item: tuple[int, str, int, int]) -> bytes:
    """The head the Python path writes for a stored send (put_response, encode_head)."""
    opaque, msg_id, queue_id, queue_offset = item
    append = AppendMessageResult(
        AppendMessageStatus.PUT_OK, msg_id=msg_id, queue_offset=queue_offset
    )
    response = put_response(
        broker, PutMessageResult(PutMessageStatus.PUT_OK, append), queue_id=queue_id
    )
    request = RemotingCommand.create_request(RequestCode.SEND_MESSAGE_V2, {})
    request.opaque = opaque
    return encode_head(response.response_to(request))


async def test_reply_heads_are_the_python_encoders_bytes(tmp_path: Path) -> None:
    compiled = native_frames.COMPILED
    assert compiled is not None
    rng = random.Random(22)
    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        pieces = reply_pieces(broker)
        assert pieces is not None
        host = host_to_bytes(broker.store_host)
        ids = [message_id_from_host_bytes(host, w) for w in INT64] + ["a", "Z9" * 32]
        items = [(o, m, q, rng.choice(INT64)) for o in INT32 for m in ids for q in INT32]
        items += [
            (rng.randrange(-(2**31), 2**31), ids[i % 3], rng.randrange(64), i) for i in range(200)
        ]
        native_frames.use(False)
        expected = b"".join(python_reply(broker, item) for item in items)
        assert compiled.send_reply_heads(pieces, items) == expected
        assert compiled.send_reply_heads(pieces, []) == b""
        # values C does not write: the Python path answers
        m = ids[0]
        for bad in (
            (2**31, m, 0, 0),
            (0, m, -(2**31) - 1, 0),
            (0, m, 0, 2**63),
            (0, m, 0, "1"),
            (0, "", 0, 0),
            (0, "A" * 65, 0, 0),
            (0, "A,B", 0, 0),
            (0, 'A"', 0, 0),
            (0, "\u00e9", 0, 0),
            (0, b"AB", 0, 0),
        ):
            assert compiled.send_reply_heads(pieces, [bad]) is None  # type: ignore[list-item]
        assert compiled.send_reply_heads(pieces, [(1, 2, 3)]) is None  # type: ignore[list-item]


async def test_reply_runs_are_the_reply_heads_of_each_run(tmp_path: Path) -> None:
    """send_reply_runs (one call a flush) gives send_reply_heads of each connection's run."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    rng = random.Random(23)
    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        pieces = reply_pieces(broker)
        assert pieces is not None
        prefix = broker.message_store.commit_log.msg_id_prefix.encode()
        items = [(rng.randrange(2**31), rng.randrange(2**40), i % 4, i) for i in range(50)]
        ends = [1, 2, 10, 10, 33, 50]  # runs of 1, 1, 8, 0, 23 and 17 replies
        runs = compiled.send_reply_runs(pieces, items, prefix, ends)
        starts = [0, *ends[:-1]]
        expected = [
            compiled.send_reply_heads(pieces, items[a:b], prefix)
            for a, b in zip(starts, ends, strict=True)
        ]
        assert runs == expected
        assert runs[0] == python_reply(
            broker, (items[0][0], f"{prefix.decode()}{items[0][1]:016X}", 0, 0)
        )
        assert compiled.send_reply_runs(pieces, [], prefix, []) == []
        # runs that do not cover the items, a bad value or a bad prefix: the Python path
        for bad_ends in ([], [49], [10, 5, 50], [51], [-1, 50], ["1", 50]):
            assert compiled.send_reply_runs(pieces, items, prefix, bad_ends) is None  # type: ignore[arg-type]
        bad = [*items[:3], (0, 2**63, 0, 0)]
        assert compiled.send_reply_runs(pieces, bad, prefix, [1, 4]) is None
        assert compiled.send_reply_runs(pieces, items, b"A-B", [50]) is None


@pytest.mark.parametrize(
    "store",
    [{}, {"flushDiskType": "SYNC_FLUSH"}, {"brokerRole": "SYNC_MASTER"}],
    ids=["async-flush", "sync-flush", "sync-master"],
)
async def test_a_burst_is_answered_and_stored_alike_on_both_paths(
    tmp_path: Path, store: dict[str, str]
) -> None:
    n = 32
    async with run_broker(tmp_path, store_properties={**SMALL, **store}) as broker:
        native = await burst_on(broker, True, n)
        python = await burst_on(broker, False, n)
    assert native.pop("native answers") == n
    assert python.pop("native answers") == 0
    assert native["codes"] == [ResponseCode.SUCCESS] * n
    assert native["put times"] == native["put latencies"] == native["rpc latencies"] == n
    assert native == python


async def test_sends_the_c_answer_does_not_take_are_answered_by_python(tmp_path: Path) -> None:
    native_frames.use(True)
    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        answers = processor_of(broker).answers
        # a delay level, a timer, a transaction half, a retry topic, a ROCKETMQ header, a put
        # the store refuses (properties over 32k once CLUSTER is added)
        too_long = {"BIG": "v" * (32_767 - len("WAIT\x01true\x02BIG\x01\x02"))}
        compact = send_request("Plain", b"compact", code=RequestCode.SEND_MESSAGE_V2)
        compact.serialize_type = SerializeType.ROCKETMQ
        cases = [
            send_request("Delayed", b"d", extra={"DELAY": "2"}),
            send_request("Timed", b"t", extra={"TIMER_DELAY_SEC": "5"}),
            send_request("Half", b"h", sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE),
            send_request("%RETRY%NoSuchGroup", b"r"),
            compact,
            send_request("Plain", b"big", extra=too_long),
        ]
        async with RemotingClient() as client:
            replies = [await client.invoke(broker.broker_addr, r, WAIT_S) for r in cases]
            assert answers.native_answers == 0
            codes = [r.code for r in replies]
            assert codes == [
                ResponseCode.SUCCESS,
                ResponseCode.SUCCESS,
                ResponseCode.SUCCESS,
                ResponseCode.SUCCESS,
                ResponseCode.SUCCESS,
                ResponseCode.MESSAGE_ILLEGAL,
            ], [r.remark for r in replies]
            plain = await client.invoke(broker.broker_addr, send_request("Plain", b"p"), WAIT_S)
            assert plain.code == ResponseCode.SUCCESS
            assert answers.native_answers == 1
        # a oneway send is stored and never answered
        oneway = send_request("Plain", b"oneway")
        oneway.mark_oneway_rpc()
        host, port = broker.broker_addr.split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(encode(oneway) + encode(send_request("Plain", b"after")))
        decoder = FrameDecoder()
        replies = []
        async with asyncio.timeout(WAIT_S):
            while not replies:
                replies += decoder.feed(await reader.read(65536))
        writer.close()
        assert [r.code for r in replies] == [ResponseCode.SUCCESS]
        assert answers.native_answers == 2
        store = broker.message_store
        assert store.wait_for_dispatch(WAIT_S)
        bodies = sorted(
            decode_message(b).body
            for q in range(8)
            for b in store.get_message("g", "Plain", q, 0, 10).message_buffers
        )
        assert bodies == [b"after", b"compact", b"oneway", b"p"]


async def test_a_flush_s_answers_leave_without_a_write_window_callback(tmp_path: Path) -> None:
    """A connection's answers of one flush are one write: no loop callback per connection
    to close a write window after them (sync sends on 4 connections, 5 each)."""
    native_frames.use(True)
    loop = asyncio.get_running_loop()
    windows: list[object] = []
    call_soon = loop.call_soon

    def counting(callback: Any, *args: Any, context: Any = None) -> asyncio.Handle:
        if getattr(callback, "__name__", "") == "_write_unwritten":
            windows.append(callback)
        return call_soon(callback, *args, context=context)

    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        answers = processor_of(broker).answers
        host, port = broker.broker_addr.split(":")
        first = send_request("Windows", b"create", code=RequestCode.SEND_MESSAGE_V2)
        await raw_burst(broker.broker_addr, [first])  # the topic is created on the Python path
        before = answers.native_answers

        async def sender(k: int) -> list[int]:
            reader, writer = await asyncio.open_connection(host, int(port))
            codes = []
            try:
                decoder = FrameDecoder()
                for i in range(5):
                    request = send_request(
                        "Windows", b"%d-%d" % (k, i), code=RequestCode.SEND_MESSAGE_V2
                    )
                    writer.write(encode(request))
                    replies: list[RemotingCommand] = []
                    async with asyncio.timeout(WAIT_S):
                        while not replies:
                            data = await reader.read(65536)
                            assert data, "the broker closed the connection"
                            replies = decoder.feed(data)
                    codes += [r.code for r in replies]
            finally:
                writer.close()
            return codes

        loop.call_soon = counting  # type: ignore[method-assign]
        try:
            codes = await asyncio.gather(*(sender(k) for k in range(4)))
        finally:
            loop.call_soon = call_soon  # type: ignore[method-assign]
        assert codes == [[ResponseCode.SUCCESS] * 5] * 4
        assert answers.native_answers - before == 20
        assert windows == []


class _Declining:
    """The C frames with ``send_answer_flush`` declining every flush (None)."""

    def __init__(self, compiled: object) -> None:
        self._compiled = compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self._compiled, name)

    def send_answer_flush(self, *args: object) -> None:
        return None


async def test_a_flush_send_answer_flush_declines_is_answered_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flush whose values ``send_answer_flush`` declines goes ``_answer_runs``' way (a send
    at a time, ``send_reply_runs``): the same bytes, records and figures as the one call's."""
    n = 16
    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        one_call = await burst_on(broker, True, n, "OneCall")
        declining = _Declining(native_frames.COMPILED)

        def use(native: bool) -> bool:  # burst_on's switch keeps the declining module
            monkeypatch.setattr(native_frames, "FRAMES", declining if native else None)
            return native

        monkeypatch.setattr(native_frames, "use", use)
        loop_way = await burst_on(broker, True, n, "LoopWay")
    assert one_call.pop("native answers") == loop_way.pop("native answers") == n
    assert one_call["put times"] == one_call["rpc latencies"] == n
    assert one_call == loop_way


async def test_answer_flush_gives_the_reference_s_answers(tmp_path: Path) -> None:
    """send_answer_flush on a flush of real requests over three connections: the sends the
    Python path answers (a refused put, a system topic, a ROCKETMQ header, a oneway), each
    connection's replies as send_reply_heads writes them, the figures' lists."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        pieces = reply_pieces(broker)
        assert pieces is not None
        prefix = broker.message_store.commit_log.msg_id_prefix.encode()
    channels = [object(), object(), object()]
    topics = ["A", "B", "A", "A", "SCHEDULE_TOPIC_XXXX", "B", "A", "B", "A", "C"]
    deferreds, puts, values = [], [], []
    for i, topic in enumerate(topics):
        request = send_request(topic, b"x", code=RequestCode.SEND_MESSAGE_V2)
        if i == 5:
            request.serialize_type = SerializeType.ROCKETMQ
        if i == 6:
            request.mark_oneway_rpc()
        deferreds.append(FuzzDeferred(channels[i % 3], request, 0.25 * i))  # type: ignore[arg-type]
        puts.append((topic, i % 4, b"x"))
        values += [2 if i == 3 else 0, 4096 * i, 100 + i, 10 * i]
    skip = frozenset(("SCHEDULE_TOPIC_XXXX",))
    args = (pieces, prefix, deferreds, puts, values, range(10), skip, SerializeType.JSON, 9.0)
    got = compiled.send_answer_flush(*args)  # type: ignore[arg-type]
    assert got is not None
    assert got == answer_flush_reference(*args)  # type: ignore[arg-type]
    alone, runs, frames, counts, requests, elapsed, sizes = got
    assert alone == [3, 4, 5, 6]
    assert runs == channels
    assert counts == [2, 2, 2]  # 0 9 | 1 7 | 2 8
    order = [0, 9, 1, 7, 2, 8]
    assert requests == [deferreds[i].request for i in order]
    assert elapsed == [9.0 - 0.25 * i for i in order]
    assert list(sizes.items()) == [("A", [100, 102, 108]), ("C", [109]), ("B", [101, 107])]
    items = [(deferreds[i].request.opaque, 4096 * i, i % 4, 10 * i) for i in order]
    assert frames == [
        compiled.send_reply_heads(pieces, items[a : a + 2], prefix) for a in (0, 2, 4)
    ]
    # a value it does not handle, an index out of range, a bad prefix: None, nothing done
    for bad_values, indexes, bad_prefix in (
        ([*values[:-1], 2**63], range(10), prefix),
        (values, [10], prefix),
        (values, range(10), b"A-B"),
    ):
        bad = (pieces, bad_prefix, deferreds, puts, bad_values, indexes, skip, args[7], 9.0)
        assert compiled.send_answer_flush(*bad) is None  # type: ignore[arg-type]


async def test_a_send_the_fast_path_declines_is_read_whole_by_python(tmp_path: Path) -> None:
    """The split reads a send's put from its header's text and leaves its request's extFields
    unread; a send ``take`` declines (a queue out of range, a topic not allowed) reaches the
    Python path with them read (``full_request``): the same answers as with C off."""
    answers: dict[bool, list[tuple[int, str | None]]] = {}
    record_before = native_record.RECORD is not None
    try:
        async with run_broker(tmp_path, store_properties=SMALL) as broker:
            for native in (True, False):
                native_frames.use(native)
                native_record.use(native)  # the split reads sends with both on
                topic = f"Declined{int(native)}"
                requests = [
                    send_request(topic, b"made", code=RequestCode.SEND_MESSAGE_V2),
                    send_request(topic, b"queue", queue_id=100, code=RequestCode.SEND_MESSAGE_V2),
                    send_request("TBW102", b"x", code=RequestCode.SEND_MESSAGE_V2),
                ]
                got = []
                for request in requests:  # one by one: the topic exists before the second
                    _, replies = await raw_burst(broker.broker_addr, [request])
                    got += replies
                answers[native] = [(r.code, (r.remark or "").replace(topic, "T")) for r in got]
            assert processor_of(broker).split_reads >= 1
    finally:
        native_record.use(record_before)
    assert answers[True] == answers[False]
    assert [code for code, _ in answers[True]] != [ResponseCode.SUCCESS] * 3
