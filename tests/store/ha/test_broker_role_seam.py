"""The store's role switched at runtime (controller mode: ReplicasManager sets
``MessageStoreConfig.brokerRole`` on every role change): a SLAVE refuses puts, a master takes
them and starts its timer wheel."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.store.config import BrokerRole
from rocketq.store.results import PutMessageStatus
from rocketq.testing.autoswitch import autoswitch
from rocketq.testing.store import new_msg, open_ha_store

pytestmark = pytest.mark.timeout(60)


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
