"""A pop's restNum (PopMessageProcessor: the messages left after the pop in the queues it
read and in those it did not reach): exact while nothing is sent, the counts of queues it did
not reach taken from earlier pops for ``REST_CACHE_MS`` at most (``PopReader._rest``), and a
queue a pop read counted afresh by that pop."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.pop.pop_reader import REST_CACHE_MS
from rocketq.broker.processors.pop_message import PopMessageProcessor
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import INIT_MODE_MIN, PopMessageRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing import run_broker
from rocketq.testing.store import new_msg, small_store_properties
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(60)

TOPIC, GROUP, QUEUES, PER_QUEUE = "RestNumTopic", "rest-num-group", 4, 40


def pop_request() -> RemotingCommand:
    header = PopMessageRequestHeader(
        consumer_group=GROUP, topic=TOPIC, queue_id=-1, max_msg_nums=32,
        invisible_time=60_000, poll_time=0, born_time=int(time.time() * 1000),
        init_mode=INIT_MODE_MIN,
    )  # fmt: skip
    return RemotingCommand.create_request(RequestCode.POP_MESSAGE, header.to_ext_fields())


async def rest_num(processor: PopMessageProcessor) -> int:
    answer = processor.pop_message(None, pop_request())  # type: ignore[arg-type]
    if not isinstance(answer, RemotingCommand):  # read in a task (the Python record paths)
        answer = await answer
    assert isinstance(answer, RemotingCommand)
    assert answer.code == ResponseCode.SUCCESS, answer.remark
    return int(answer.ext_fields["restNum"])


async def put(broker: BrokerController, queue_id: int, count: int) -> None:
    store = broker.message_store
    target = store.get_max_offset_in_queue(TOPIC, queue_id) + count
    for i in range(count):
        store.put_message(new_msg(TOPIC, queue_id, f"m{i}".encode()))
    assert await until(lambda: store.get_max_offset_in_queue(TOPIC, queue_id) == target, 10)


async def filled(broker: BrokerController) -> None:
    broker.topic_config_manager.update_topic_config(
        TopicConfig(topic_name=TOPIC, read_queue_nums=QUEUES, write_queue_nums=QUEUES)
    )
    for q in range(QUEUES):
        await put(broker, q, PER_QUEUE)


async def test_rest_num_counts_what_is_left_in_every_queue_pop_after_pop(tmp_path: Path) -> None:
    async with run_broker(tmp_path, store_properties=small_store_properties()) as broker:
        await filled(broker)
        processor = PopMessageProcessor(broker)
        total = QUEUES * PER_QUEUE
        for popped in range(32, total + 1, 32):  # pops in a row: counts from the cache too
            assert await rest_num(processor) == total - popped


async def test_a_queue_count_is_kept_for_the_cache_time_then_counted_again(
    tmp_path: Path,
) -> None:
    async with run_broker(tmp_path, store_properties=small_store_properties()) as broker:
        await filled(broker)
        reader = broker.pop_service.reader
        now = broker.message_store.now_ms()
        assert reader.rest_count(GROUP, TOPIC, 1, now) == PER_QUEUE  # no offset yet: all
        await put(broker, 1, 3)  # sent after the count
        assert reader.rest_count(GROUP, TOPIC, 1, now + REST_CACHE_MS - 1) == PER_QUEUE
        assert reader.rest_count(GROUP, TOPIC, 1, now + REST_CACHE_MS) == PER_QUEUE + 3
        assert reader.rest_count(GROUP, TOPIC, 1, now - 1) == PER_QUEUE + 3  # clock went back
