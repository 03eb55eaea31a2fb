"""A flush of single sends in one step (``PutBatcher._flush_now``: ``store.sends_now`` and
``SendAnswers.answer_now``) against the reference way (``async_put_sends`` and
``answer_sends``): the same replies, records and figures, and the one step only on a store
where no put waits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.remoting import native_frames
from rocketq.response_code import ResponseCode
from rocketq.store.sends_now import sends_wait_for_none
from rocketq.testing.broker import run_broker
from rocketq.testing.wire import send_request
from tests.broker.send_bursts import SMALL, burst_on, processor_of, raw_burst

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(native_frames.COMPILED is None, reason="rocketq._native not built"),
]


@pytest.fixture(autouse=True)
def _restore_path() -> Iterator[None]:
    before = native_frames.FRAMES is not None
    yield
    native_frames.use(before)


@pytest.mark.parametrize(
    "store",
    [{}, {"flushDiskType": "SYNC_FLUSH"}, {"brokerRole": "SYNC_MASTER"}],
    ids=["async-flush", "sync-flush", "sync-master"],
)
async def test_a_flush_put_in_one_step_is_answered_and_stored_as_the_reference(
    tmp_path: Path, store: dict[str, str]
) -> None:
    """A flush of single sends on a store where none waits goes ``put_sends_now`` and
    ``answer_now`` in one step; the reference way (``flush_now`` False: ``async_put_sends``
    and ``answer_sends``) gives the same replies, records and figures. A store where puts
    wait (SYNC_FLUSH, SYNC_MASTER) never takes the one step."""
    n = 24
    async with run_broker(tmp_path, store_properties={**SMALL, **store}) as broker:
        batcher = processor_of(broker).put_batcher
        for topic in ("StepOne", "StepRef"):  # the topics exist: every send is the lane's
            await raw_burst(broker.broker_addr, [send_request(topic, b"first", queue_id=1)])
        one_step_store = sends_wait_for_none(broker.message_store)
        before = batcher.now_flushes
        one_step = await burst_on(broker, True, n, "StepOne")
        stepped = batcher.now_flushes - before
        batcher.flush_now = False
        before = batcher.now_flushes, batcher.lane_flushes
        reference = await burst_on(broker, True, n, "StepRef")
        assert batcher.now_flushes == before[0]
        assert batcher.lane_flushes > before[1]
    assert one_step_store is ("flushDiskType" not in store)
    assert (stepped > 0) is one_step_store
    assert one_step.pop("native answers") == reference.pop("native answers") == n
    assert one_step["codes"] == [ResponseCode.SUCCESS] * n
    assert one_step["put times"] == one_step["put latencies"] == one_step["rpc latencies"] == n
    assert one_step == reference
