"""A pop's common read done flat (``PopReader._took_held``: a normal pop's read in memory
whose checkpoint the pop buffer holds) against ``_took`` with ``_popped``, the reference, on
two brokers holding the same messages: after the same pops, acks and an offset reset, the
same held checkpoints and queue buffers, in-flight spans and per-offset entries, expiry heap,
rest counts, committed offset and answer infos and records."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.broker.pop.pop_batch import PopBatch, read_in_memory
from rocketq.broker.property_filter import message_filter_of
from rocketq.common import native_record
from rocketq.common.message_decoder import decode_messages
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.pop_headers import INIT_MODE_MIN
from rocketq.remoting.protocol.subscription import build_subscription_data
from rocketq.testing import run_broker
from rocketq.testing.store import new_msg
from rocketq.testing.wait import until

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
    pytest.mark.usefixtures("c_record_paths"),  # the read in memory is C's walk
]

TOPIC, GROUP, COUNT = "HeldPopTopic", "held-pop-group", 40
EVERYTHING = message_filter_of(build_subscription_data(TOPIC, "*"))


POP_TIMES = [1_700_000_000_000 + i for i in range(10)]  # one a pop: distinct merge keys


def pop(broker: BrokerController, pop_time: int, want: int, *, flat: bool) -> PopBatch:
    reader = broker.pop_service.reader
    batch = PopBatch(pop_time, 60_000, 3)
    offset = reader.pop_offset(GROUP, TOPIC, 0, INIT_MODE_MIN)
    found = read_in_memory(broker.message_store, TOPIC, 0, offset, want, EVERYTHING)
    assert found is not None
    if flat:
        reader._took_held(batch, GROUP, TOPIC, 0, offset, found)
    else:
        offsets = list(range(offset, found.next_begin_offset))
        assert reader._took(batch, GROUP, TOPIC, 0, offset, found, offsets, TOPIC) is None
    return batch


def state(broker: BrokerController, batch: PopBatch) -> dict[str, Any]:
    service = broker.pop_service
    buffer = service.buffer
    assert buffer is not None
    inflight = service.inflight
    return {
        "held": {k: (e.ck, e.revive_qid, sorted(e.acked), e.done) for k, e in buffer._held.items()},
        "queues": {
            k: (q.read_offset, q.committed, [(e.ck, e.key, e.done) for e in q.entries])
            for k, q in buffer._queues.items()
        },
        "inflight": {
            k: (
                dict(q.offsets),
                [(s.start, s.end, s.pop_time, s.ends_ms, s.acked) for s in q.spans.values()],
                q.high,
            )
            for k, q in inflight._queues.items()
        },
        "ends": [(e[0], *e[2:]) for e in sorted(inflight._ends, key=lambda e: e[:2])],
        "rests": dict(service.reader._rests),
        "committed": broker.consumer_offset_manager.query_offset(GROUP, TOPIC, 0),
        "batch": (batch.rest_num, batch.entries, batch.count),
        "records": [
            (m.queue_offset, m.body) for m in decode_messages(b"".join(batch.buffers))
        ],  # the two stores' timestamps differ
    }


async def test_the_flat_pop_leaves_what_the_reference_leaves(tmp_path: Path) -> None:
    async with AsyncExitStack() as stack:
        brokers = [await stack.enter_async_context(run_broker(tmp_path / n)) for n in "ab"]
        for broker in brokers:
            broker.topic_config_manager.update_topic_config(
                TopicConfig(topic_name=TOPIC, read_queue_nums=1, write_queue_nums=1)
            )
            for i in range(COUNT):
                broker.message_store.put_message(new_msg(TOPIC, 0, f"m{i}".encode()))
            store = broker.message_store
            assert await until(lambda s=store: s.get_max_offset_in_queue(TOPIC, 0) == COUNT, 10)
        flat, reference = brokers

        def both(step: int, want: int) -> dict[str, Any]:
            got = state(flat, pop(flat, POP_TIMES[step], want, flat=True))
            assert got == state(reference, pop(reference, POP_TIMES[step], want, flat=False))
            return got

        first = both(0, 8)  # a fresh queue
        assert first["batch"][1] == [(TOPIC, 0, 0, list(range(8)))]
        assert first["batch"][0] == COUNT - 8
        assert first["committed"] == 0  # held back by the held checkpoint
        second = both(1, 8)  # past the first's span
        assert [s[:2] for s in second["inflight"][(GROUP, TOPIC, 0)][1]] == [(0, 8), (8, 16)]
        for broker in brokers:  # the first acked in full: it no longer holds the commit back
            buffer = broker.pop_service.buffer
            assert buffer is not None
            key = next(iter(buffer._held))
            assert buffer.merge(key, list(range(8)))
        third = both(2, 8)
        assert third["committed"] == 8
        for broker in brokers:  # an offset reset: the next pop reads popped offsets again
            broker.consumer_offset_manager.commit_offset("127.0.0.1", GROUP, TOPIC, 0, 4)
        again = both(3, 8)  # over the spans: the in-flight table's per-offset entries
        assert again["batch"][1] == [(TOPIC, 0, 4, list(range(4, 12)))]
        assert again["inflight"][(GROUP, TOPIC, 0)][0]  # per-offset entries were made
        both(4, 32)
