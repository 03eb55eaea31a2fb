"""A woken pull's FOUND answer as frame bytes (``pull_answer``: the head built in one C call,
``_record.pull_reply_head``) against the reference (a ``RemotingCommand`` and the Python
encoder): the head alone for many numbers, and a real broker's answers of held pulls woken
by sends, on both paths, byte for byte the Python path's answer of the same pull read after,
with the same BrokerStatsManager figures."""

from __future__ import annotations

import asyncio
import dataclasses
import struct
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.processors.pull import PullMessageProcessor
from rocketq.broker.processors.pull_answer import FIELDS, found_head_pieces, pull_reply_head
from rocketq.common import native_record
from rocketq.common.pull_sys_flag import build_sys_flag
from rocketq.remoting import native_frames
from rocketq.remoting.codec import decode, encode_head
from rocketq.remoting.protocol.codes import SerializeType
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker
from rocketq.testing.wait import until
from rocketq.testing.wire import create_topic, pull_request, send_request
from tests.broker.raw_wire import Wire

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
]

WAIT_S = 10.0
HELD = build_sys_flag(commit_offset=False, suspend=True, subscription=True)
NOT_HELD = build_sys_flag(commit_offset=False, suspend=False, subscription=True)
NUMBERS = [
    (0, 0, 0, 0, 0, 0),
    (1, 12, 0, 13, 77, 1024),
    (0, 1 << 40, 3, (1 << 40) + 1, -(1 << 31), 1),
    (2, (1 << 63) - 1, -(1 << 63), 5, (1 << 31) - 1, 4 * 1024 * 1024),
]


def reference_head(values: tuple[int, ...], body_length: int) -> bytes:
    """The head ``encode_head`` gives the RemotingCommand ``_answer_with_suggestion`` builds."""
    fields = {name: str(v) for name, v in zip(FIELDS, values, strict=False)}
    cmd = RemotingCommand.create_response(
        ResponseCode.SUCCESS, "FOUND", ext_fields=fields, body=b"x" * body_length
    )
    cmd.opaque = values[-1]
    return encode_head(cmd)


@pytest.mark.parametrize("numbers", NUMBERS)
def test_the_c_head_is_the_reference_s_and_its_python_twin_s(numbers: tuple[int, ...]) -> None:
    assert native_record.COMPILED is not None
    *values, body_length = numbers
    pieces = found_head_pieces()
    compiled = native_record.COMPILED.pull_reply_head(pieces, tuple(values), body_length)
    assert compiled == reference_head(tuple(values), body_length)
    assert compiled == pull_reply_head(pieces, tuple(values), body_length)
    (length,) = struct.unpack_from(">i", compiled)
    assert length == len(compiled) - 4 + body_length  # the frame's length counts the body


@pytest.mark.parametrize(
    ("pieces", "values", "body_length"),
    [
        ((b"a", b"b"), (1, 2), 0),  # one piece short
        ((b"a", "b"), (1,), 0),  # a piece not bytes
        ([b"a", b"b"], (1,), 0),  # not a tuple
        ((b"a", b"b"), ("1",), 0),  # a value not an int
        ((b"a", b"b"), (1 << 63,), 0),  # out of int64
        ((b"a", b"b"), (1,), -1),  # a negative body
        ((b"a", b"b"), (1,), 1 << 31),  # a frame over 2^31 - 1
        ((b"a",) * 10, (1,) * 9, 0),  # more numbers than it takes
    ],
)
def test_shapes_the_c_head_does_not_take_are_declined(
    pieces: object, values: object, body_length: object
) -> None:
    assert native_record.COMPILED is not None
    head = native_record.COMPILED.pull_reply_head(pieces, values, body_length)  # type: ignore[arg-type]
    assert head is None


def stats_of(broker: BrokerController) -> tuple[int, int, int]:
    stats = broker.broker_stats_manager
    return (
        stats.get_message_times_total_found,
        stats.get_message_transfered_msg_count,
        stats.get_message_times_total_miss,
    )


@pytest.mark.parametrize("native", [True, False])
async def test_woken_pulls_answer_the_reference_s_bytes(
    tmp_path: Path, native: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    native_frames.use(native)
    native_record.use(native)
    fast: list[bool] = []
    answer_found = PullMessageProcessor._answer_found

    def counted(self: PullMessageProcessor, *args: object) -> bool:
        taken = answer_found(self, *args)  # type: ignore[arg-type]
        fast.append(taken)
        return taken

    monkeypatch.setattr(PullMessageProcessor, "_answer_found", counted)
    async with run_broker(tmp_path) as broker:
        consumer = Wire(*await asyncio.open_connection(*broker.broker_addr.split(":")))
        producer = Wire(*await asyncio.open_connection(*broker.broker_addr.split(":")))
        try:
            await create_topic([broker.broker_addr], "T", 1)
            hold = broker.pull_request_hold_service
            cases = [
                (expression, max_nums, shared, serialize)
                for expression in ("*", "A || B")
                for max_nums in (1, 32)
                for shared in (True, False)  # the send on the held pull's connection, or not
                for serialize in (SerializeType.JSON, SerializeType.ROCKETMQ)
            ]
            for offset, (expression, max_nums, shared, serialize) in enumerate(cases):
                held = pull_request(
                    "G", "T", 0, offset, expression=expression, sys_flag=HELD, max_nums=max_nums
                )
                held.serialize_type = serialize
                held.opaque = -1000 - offset if offset % 2 else 1000 + offset
                consumer.write(held)
                assert await until(lambda: hold.held_count == 1, WAIT_S)  # held, not answered
                before = stats_of(broker)
                sender = consumer if shared else producer
                sent = send_request("T", b"m%d" % offset * (offset + 1), tags="A", queue_id=0)
                sender.write(sent)
                woken = await consumer.frame_of(held.opaque)
                after = stats_of(broker)
                assert decode(await sender.frame_of(sent.opaque)).code == ResponseCode.SUCCESS
                native_frames.use(False)
                native_record.use(False)
                again = pull_request(
                    "G", "T", 0, offset, expression=expression, sys_flag=NOT_HELD, max_nums=max_nums
                )
                again.serialize_type, again.opaque = serialize, held.opaque
                reference = await consumer.call(again)
                native_frames.use(native)
                native_record.use(native)
                assert woken == reference, (expression, max_nums, shared, serialize)
                answer = decode(woken)
                assert (answer.code, answer.ext_fields["nextBeginOffset"]) == (
                    ResponseCode.SUCCESS,
                    str(offset + 1),
                )
                assert after[0] - before[0] == 1  # found
                assert after[1] - before[1] == 1  # one message
                stats = broker.broker_stats_manager
                assert stats.pull_offsets[("T", "G", 0)] == offset + 1
            # the C head answered every JSON pull on the C path, and none on the Python path
            assert fast == ([True] * (len(cases) // 2) if native else [])
        finally:
            consumer.writer.close()
            producer.writer.close()


async def test_a_woken_pull_refused_since_it_was_held_gets_the_refusal(tmp_path: Path) -> None:
    """The woken read checks again (RocketMQ re-runs the whole request): a group whose
    consumption was turned off while its pull was held is answered NO_PERMISSION."""
    native_frames.use(True)
    native_record.use(True)
    async with run_broker(tmp_path) as broker:
        consumer = Wire(*await asyncio.open_connection(*broker.broker_addr.split(":")))
        try:
            await create_topic([broker.broker_addr], "T", 1)
            held = pull_request("G", "T", 0, 0, sys_flag=HELD)
            consumer.write(held)
            hold = broker.pull_request_hold_service
            assert await until(lambda: hold.held_count == 1, WAIT_S)
            groups = broker.subscription_group_manager
            config = groups.find_subscription_group_config("G")
            assert config is not None
            groups.update_subscription_group_config(
                dataclasses.replace(config, consume_enable=False)
            )
            sent = send_request("T", b"m", tags="A", queue_id=0)
            consumer.write(sent)
            refused = decode(await consumer.frame_of(held.opaque))
            assert refused.code == ResponseCode.NO_PERMISSION
            assert refused.remark == "subscription group no permission, G"
            assert decode(await consumer.frame_of(sent.opaque)).code == ResponseCode.SUCCESS
        finally:
            consumer.writer.close()
