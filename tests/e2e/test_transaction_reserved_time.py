"""A half older than the store's fileReservedTime is discarded, not checked (RocketMQ's
TransactionalMessageServiceImpl.needSkip), read from the store's own typed config."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketq.broker import BrokerController
from rocketq.common import message_decoder as codec
from rocketq.common.message import MessageExt
from rocketq.common.topic import TRANS_CHECK_MAX_TIME_TOPIC, TRANS_HALF_TOPIC
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.testing import run_broker, until
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request

pytestmark = pytest.mark.e2e
WAIT = 10.0


def records(broker: BrokerController, topic: str) -> list[MessageExt]:
    result = broker.message_store.get_message("t", topic, 0, 0, 100)
    return [codec.decode_message(b) for b in result.message_buffers]


async def _scan_one_half(tmp_path: Path, reserved_hours: str) -> tuple[int, list[MessageExt]]:
    props = small_store_properties(fileReservedTime=reserved_hours)
    async with (
        run_broker(tmp_path / "store", store_properties=props) as broker,
        RemotingClient() as client,
    ):
        half = send_request("TxOld", b"half", extra={"TRAN_MSG": "true"})
        sent = await client.invoke(broker.broker_addr, half, WAIT)
        assert sent.code == ResponseCode.SUCCESS, sent.remark
        assert await until(lambda: len(records(broker, TRANS_HALF_TOPIC)) == 1, WAIT)
        [stored] = records(broker, TRANS_HALF_TOPIC)
        store = broker.message_store
        assert await until(lambda: store.now_ms() > stored.store_timestamp, WAIT)
        service = broker.transactional_message_check_service
        assert service is not None
        summary = await service.check()
        # the discarded copy is put by the check: read back once dispatched
        assert await asyncio.to_thread(store.wait_for_dispatch, WAIT)
        return summary.discarded, records(broker, TRANS_CHECK_MAX_TIME_TOPIC)


async def test_a_half_older_than_the_file_reserved_time_is_discarded_unchecked(
    tmp_path: Path,
) -> None:
    discarded, parked = await _scan_one_half(tmp_path, "0")
    assert discarded == 1
    assert [m.body for m in parked] == [b"half"]


async def test_a_half_younger_than_the_file_reserved_time_is_kept_for_its_check(
    tmp_path: Path,
) -> None:
    discarded, parked = await _scan_one_half(tmp_path, "72")
    assert discarded == 0
    assert parked == []
