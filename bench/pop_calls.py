"""The broker's CPU per POP request, in process (issue 18): ``pop_bench.py --calls``.

A broker (``rocketq.testing.run_broker``) holds ``count`` messages of 1 KB in 4 queues, put
straight into its store; a new group pops them 32 at a time through PopMessageProcessor and
batch-acks each pop through AckMessageProcessor, called as the connection's reader calls them
(a coroutine, where the processor hands one back, awaited). Printed: the thread CPU time of
each pop and each batch ack (median and mean), without the frames, the socket or the load
generator, so the figure holds on a loaded machine where the end-to-end TPS does not; and the
load generator's own share per reply (its messages and handles read, its batch ack built).
"""

from __future__ import annotations

import inspect
import statistics
import tempfile
import time

from rocketq.broker.processors.ack_message import AckMessageProcessor
from rocketq.broker.processors.pop_message import PopMessageProcessor
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.codec import FrameDecoder, encode_head
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import (
    INIT_MODE_MIN,
    PopMessageRequestHeader,
)
from rocketq.response_code import ResponseCode
from rocketq.testing import run_broker
from rocketq.testing.pop import batch_ack_request, popped_handles
from rocketq.testing.store import new_msg

TOPIC, GROUP, QUEUES, BATCH = "BenchCalls", "BenchCallsCG", 4, 32


def _pop_request() -> RemotingCommand:
    header = PopMessageRequestHeader(
        consumer_group=GROUP, topic=TOPIC, queue_id=-1, max_msg_nums=BATCH,
        invisible_time=600_000, poll_time=0, born_time=int(time.time() * 1000),
        init_mode=INIT_MODE_MIN,
    )  # fmt: skip
    return RemotingCommand.create_request(RequestCode.POP_MESSAGE, header.to_ext_fields())


def _ack_request(broker_name: str, handles: list[str]) -> RemotingCommand:
    return batch_ack_request(broker_name, GROUP, TOPIC, handles)


async def measure_calls(count: int) -> tuple[list[float], list[float], list[float]]:
    """The thread CPU seconds of each pop and each batch ack of a drain of ``count``, and of
    the load generator's work on each reply (``pop_bench``'s: the messages and their handles
    read from the reply as a client reads them, ``popped_handles``, and the batch ack built from
    the handles, ``batch_ack_request``), on the reply after its frame is decoded."""
    pops: list[float] = []
    acks: list[float] = []
    clients: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-pop-calls-") as d:
        async with run_broker(d) as broker:
            broker.topic_config_manager.update_topic_config(
                TopicConfig(topic_name=TOPIC, read_queue_nums=QUEUES, write_queue_nums=QUEUES)
            )
            store = broker.message_store
            for i in range(count):
                store.put_message(new_msg(TOPIC, i % QUEUES, b"x" * 1024))
            pop_processor, ack_processor = PopMessageProcessor(broker), AckMessageProcessor(broker)
            name = broker.config.broker_name
            while len(pops) * BATCH < count - BATCH * QUEUES:
                request = _pop_request()
                t0 = time.thread_time()
                answer = pop_processor.pop_message(None, request)  # type: ignore[arg-type]
                if inspect.iscoroutine(answer):
                    answer = await answer
                t1 = time.thread_time()
                assert isinstance(answer, RemotingCommand)
                if answer.code != ResponseCode.SUCCESS:
                    continue  # the reput has not dispatched them yet
                answer.opaque = 1
                (reply,) = FrameDecoder().feed(encode_head(answer) + (answer.body or b""))
                c0 = time.thread_time()
                request = _ack_request(name, popped_handles(reply, name))
                clients.append(time.thread_time() - c0)
                t2 = time.thread_time()
                acked = ack_processor.batch_ack_message(None, request)  # type: ignore[arg-type]
                if inspect.iscoroutine(acked):
                    acked = await acked
                t3 = time.thread_time()
                assert isinstance(acked, RemotingCommand), acked
                assert acked.code == ResponseCode.SUCCESS, acked.remark
                pops.append(t1 - t0)
                acks.append(t3 - t2)
    return pops, acks, clients


def print_calls(pops: list[float], acks: list[float], clients: list[float]) -> None:
    def us(values: list[float]) -> str:
        median, mean = statistics.median(values) * 1e6, statistics.fmean(values) * 1e6
        return f"median {median:.1f} us, mean {mean:.1f} us"

    print(f"in process, {len(pops)} pops of {BATCH} (thread CPU a call): pop {us(pops)}; "
          f"batch ack {us(acks)}; the load generator's reply read and batch ack built "
          f"{us(clients)}")  # fmt: skip
