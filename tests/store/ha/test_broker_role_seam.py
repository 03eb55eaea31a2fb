"""The store's role switched at runtime (controller mode: ReplicasManager sets
``MessageStoreConfig.brokerRole`` on every role change): a SLAVE refuses puts, a master takes
them and starts its timer wheel, a demoted one stops it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rocketq.common import message_const as mc
from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore
from rocketq.store.config import BrokerRole
from rocketq.store.results import PutMessageStatus
from rocketq.testing.autoswitch import autoswitch
from rocketq.testing.store import new_msg, open_ha_store
from rocketq.testing.wait import until_sync

pytestmark = pytest.mark.timeout(60)

TIMER_TARGET = "TimerTarget"


def test_a_fenced_store_refuses_puts_until_it_becomes_master_and_again_as_slave(
    tmp_path: Path,
) -> None:
    store = open_ha_store(tmp_path, BrokerRole.SLAVE, enable_controller_mode=True)
    try:
        timer = store.timer_message_store
        assert timer is not None
        assert not timer.is_running  # a slave keeps the files its master replicates
        refused = store.put_message(new_msg("T", body=b"fenced"))
        assert refused.status is PutMessageStatus.SERVICE_NOT_AVAILABLE
        autoswitch(store).set_local_broker_id(1)
        assert autoswitch(store).change_to_master(1)
        store.set_broker_role(BrokerRole.SYNC_MASTER)
        assert store.config.broker_role is BrokerRole.SYNC_MASTER
        assert timer.is_running
        assert store.put_message(new_msg("T", body=b"master")).status is PutMessageStatus.PUT_OK
        store.set_broker_role(BrokerRole.SLAVE)
        again = store.put_message(new_msg("T", body=b"deposed"))
        assert again.status is PutMessageStatus.SERVICE_NOT_AVAILABLE
        assert store.get_max_phy_offset() > 0
    finally:
        store.shutdown()


def timer_copies(store: MessageStore, key: str) -> int:
    store.wait_for_dispatch()
    found = store.get_message("t", TIMER_TARGET, 0, 0, 100)
    return sum(
        decode_message(data, check_crc=False).properties.get(
            mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
        )
        == key
        for data in found.message_buffers
    )


def test_a_demoted_store_stops_its_timer_and_a_timer_due_meanwhile_fires_once_promoted(
    tmp_path: Path,
) -> None:
    """A demoted master's wheel would keep delivering into a store that refuses puts and give
    the timer up after three refusals; stopped at the demotion, it fires on the next promotion."""
    store = open_ha_store(
        tmp_path, BrokerRole.SLAVE, enable_controller_mode=True, timer_precision_ms=100
    )
    try:
        autoswitch(store).set_local_broker_id(1)
        assert autoswitch(store).change_to_master(1)
        store.set_broker_role(BrokerRole.SYNC_MASTER)
        first = store.timer_message_store
        assert first is not None
        due_ms = int(time.time() * 1000) + 1_000
        msg = new_msg(TIMER_TARGET, 0, b"due", {mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: "k"})
        msg.properties[mc.PROPERTY_TIMER_DELIVER_MS] = str(due_ms)
        assert first.transform(msg) is None
        assert store.put_message(msg).is_ok
        assert until_sync(lambda: first.curr_queue_offset >= 1, 10)  # in the wheel

        store.set_broker_role(BrokerRole.SLAVE)
        demoted = store.timer_message_store
        assert demoted is not None
        assert not demoted.is_running
        assert not first.is_running
        time.sleep(max(0.0, due_ms / 1000 - time.time()) + 2.5)  # due, and refused 3 times
        assert timer_copies(store, "k") == 0

        assert autoswitch(store).change_to_master(2)
        store.set_broker_role(BrokerRole.SYNC_MASTER)
        promoted = store.timer_message_store
        assert promoted is not None
        assert promoted.is_running
        assert until_sync(lambda: timer_copies(store, "k") == 1, 10)
        time.sleep(0.5)
        assert timer_copies(store, "k") == 1
    finally:
        store.shutdown()
