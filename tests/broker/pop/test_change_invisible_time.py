"""CHANGE_MESSAGE_INVISIBLETIME's new handle is always a new handle: even when the change comes
within the millisecond of the pop (a quiet machine answers a pop in well under one), the old
handle is refused afterwards. A handle is told apart by its popTime, so the change's popTime
must be later than the handle it replaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.common.extra_info import parse_extra_info
from rocketq.response_code import ResponseCode
from rocketq.testing import pop as raw
from rocketq.testing.cluster import run_cluster
from rocketq.testing.store import small_store_properties

TOPIC = "PopChange"
GROUP = "pop-change"


@pytest.mark.parametrize("invisible_ms", [500, 1500])  # without and with the pop buffer
async def test_a_change_in_the_same_millisecond_as_the_pop_still_retires_the_old_handle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, invisible_ms: int
) -> None:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    async with run_cluster(tmp_path, store_properties=props, revive_queue_num=2) as c:
        await c.create_topic(TOPIC, queues=1)
        await c.send_raw(TOPIC, b"slow")
        store = c.broker.message_store
        frozen = store.now_ms()
        monkeypatch.setattr(store, "now_ms", lambda: frozen)  # pop and change in one ms
        _, (p,) = await raw.pop(
            c.client, c.broker_addr, "broker-a", GROUP, TOPIC, invisible_ms=invisible_ms
        )
        response, new = await raw.change_invisible_time(
            c.client, c.broker_addr, GROUP, TOPIC, p.handle, 6000
        )
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert new is not None
        assert parse_extra_info(new).pop_time > parse_extra_info(p.handle).pop_time
        stale = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, p.handle)
        assert (stale.code, stale.remark) == (ResponseCode.NO_MESSAGE, "receipt handle is expired")
        ok = await raw.ack(c.client, c.broker_addr, GROUP, TOPIC, new)
        assert ok.code == ResponseCode.SUCCESS, ok.remark
