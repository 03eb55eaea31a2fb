"""POP_MESSAGE as a fast processor (``PopReader.start_pop``): a pop whose reads are in the page
cache and whose checkpoints the pop buffer holds is answered on the connection's reader (the
processor returns the answer, no task); a pop that must write its checkpoint first (an
invisible time too short for the buffer) or read off the loop returns a coroutine that
finishes it from that queue on; both give what the reference gives: every message once, the
offsets infos naming them, nothing committed past a checkpoint not written."""

from __future__ import annotations

import asyncio
import inspect
import time
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.pop.pop_buffer import MIN_BUFFER_INVISIBLE_MS
from rocketq.broker.processors.pop_message import PopMessageProcessor
from rocketq.client.aio.pop_api import popped_messages
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.codec import FrameDecoder, encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import INIT_MODE_MIN, PopMessageRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing import run_broker
from rocketq.testing.pop import batch_ack_request, popped_of
from rocketq.testing.store import new_msg, small_store_properties
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(60)

TOPIC, GROUP, QUEUES = "ReaderPopTopic", "reader-pop-group", 2


def pop_request(invisible_ms: int, max_nums: int = 8) -> RemotingCommand:
    header = PopMessageRequestHeader(
        consumer_group=GROUP, topic=TOPIC, queue_id=-1, max_msg_nums=max_nums,
        invisible_time=invisible_ms, poll_time=0, born_time=int(time.time() * 1000),
        init_mode=INIT_MODE_MIN,
    )  # fmt: skip
    return RemotingCommand.create_request(RequestCode.POP_MESSAGE, header.to_ext_fields())


async def filled(broker: BrokerController, count: int) -> None:
    broker.topic_config_manager.update_topic_config(
        TopicConfig(topic_name=TOPIC, read_queue_nums=QUEUES, write_queue_nums=QUEUES)
    )
    for i in range(count):
        broker.message_store.put_message(new_msg(TOPIC, i % QUEUES, f"m{i}".encode()))
    store = broker.message_store
    assert await until(
        lambda: sum(store.get_max_offset_in_queue(TOPIC, q) for q in range(QUEUES)) == count, 10
    )


def bodies(answer: RemotingCommand, broker: BrokerController) -> list[bytes]:
    assert answer.code == ResponseCode.SUCCESS, answer.remark
    _, msgs = popped_messages(answer, broker.config.broker_name)
    return [m.body for m in msgs]


async def test_a_buffered_pop_of_messages_in_memory_is_answered_on_the_reader(
    tmp_path: Path,
) -> None:
    async with run_broker(tmp_path, store_properties=small_store_properties()) as broker:
        await filled(broker, 20)
        processor = PopMessageProcessor(broker)
        seen: list[bytes] = []
        for _ in range(3):
            answer = processor.pop_message(None, pop_request(60_000))  # type: ignore[arg-type]
            assert isinstance(answer, RemotingCommand)  # no coroutine: answered at once
            seen += bodies(answer, broker)
        assert sorted(seen) == sorted(f"m{i}".encode() for i in range(20))
        assert broker.pop_service.buffer is not None
        assert broker.pop_service.buffer.held_count >= 3  # the checkpoints held, not written


async def test_a_pop_that_writes_its_checkpoint_first_goes_on_in_a_task(tmp_path: Path) -> None:
    short_ms = MIN_BUFFER_INVISIBLE_MS - 1  # too short for the buffer: written at once
    async with run_broker(tmp_path, store_properties=small_store_properties()) as broker:
        await filled(broker, 12)
        processor = PopMessageProcessor(broker)
        pending = processor.pop_message(None, pop_request(short_ms))  # type: ignore[arg-type]
        assert inspect.iscoroutine(pending)
        offsets = broker.consumer_offset_manager
        committed = [offsets.query_offset(GROUP, TOPIC, q) for q in range(QUEUES)]
        assert max(committed) <= 0  # nothing committed before its checkpoint is written
        answer = await asyncio.wait_for(pending, 10)
        assert isinstance(answer, RemotingCommand)
        first = bodies(answer, broker)
        assert len(first) == 8
        fields = answer.ext_fields
        assert fields["reviveQid"] != "999"
        assert fields["startOffsetInfo"].count(";") + 1 == len(fields["msgOffsetInfo"].split(";"))
        more = processor.pop_message(None, pop_request(short_ms))  # type: ignore[arg-type]
        assert inspect.iscoroutine(more)
        rest = await asyncio.wait_for(more, 10)
        assert isinstance(rest, RemotingCommand)
        assert sorted(first + bodies(rest, broker)) == sorted(f"m{i}".encode() for i in range(12))


async def test_an_ack_and_the_next_pop_read_together_are_answered_with_one_write(
    tmp_path: Path,
) -> None:
    """A consumer's batch ack and its next pop in one socket read: both answered on the
    reader and written at the read's end in one writev, with no write-window callback (the
    first answer used to be written at once and the window closed by a loop callback)."""
    loop = asyncio.get_running_loop()
    windows: list[object] = []
    call_soon = loop.call_soon

    def counting(callback: Any, *args: Any, context: Any = None) -> asyncio.Handle:
        if getattr(callback, "__name__", "") == "_write_unwritten":
            windows.append(callback)
        return call_soon(callback, *args, context=context)

    async with run_broker(tmp_path, store_properties=small_store_properties()) as broker:
        await filled(broker, 16)
        name = broker.config.broker_name
        host, port = broker.broker_addr.split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        decoder = FrameDecoder()

        async def replies(count: int) -> list[RemotingCommand]:
            got: list[RemotingCommand] = []
            async with asyncio.timeout(10):
                while len(got) < count:
                    data = await reader.read(1 << 20)
                    assert data, "the broker closed the connection"
                    got += decoder.feed(data)
            return got

        try:
            writer.write(encode(pop_request(60_000)))
            (first,) = await replies(1)
            popped = popped_of(first, name)
            assert len(popped) == 8
            ack = batch_ack_request(name, GROUP, TOPIC, [p.handle for p in popped])
            loop.call_soon = counting  # type: ignore[method-assign]
            try:
                writer.write(encode(ack) + encode(pop_request(60_000)))
                acked, second = await replies(2)
            finally:
                loop.call_soon = call_soon  # type: ignore[method-assign]
        finally:
            writer.close()
        assert (acked.opaque, second.opaque) == (ack.opaque, ack.opaque + 1)
        assert acked.code == ResponseCode.SUCCESS, acked.remark
        again = {p.msg.body for p in popped_of(second, name)}
        assert len(again) == 8
        assert again.isdisjoint(p.msg.body for p in popped)
        assert windows == []
