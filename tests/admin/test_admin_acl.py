"""The admin client on a broker with ACL on: an admin account's signed calls pass, unsigned
changes are refused NO_PERMISSION, and the ACL calls work through the same client."""

from __future__ import annotations

import pytest

from rocketq.admin import AsyncAdminClient
from rocketq.errors import NoPermissionError
from rocketq.remoting.protocol.acl_bodies import PlainAccessConfig
from rocketq.testing.acl import ADMIN, AclCluster


async def test_signed_admin_calls_pass_and_unsigned_changes_are_refused(
    acl_cluster: AclCluster,
) -> None:
    broker = acl_cluster.broker_addr
    addr = acl_cluster.namesrv.addr
    async with AsyncAdminClient(addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
        await admin.update_broker_config(broker, {"defaultTopicQueueNums": "5"})
        await admin.create_and_update_plain_access_config(
            broker, PlainAccessConfig(access_key="NewAK0001", secret_key="NewSK0001")
        )
        accounts = await admin.get_broker_cluster_acl_config(broker)
        _, version = await admin.examine_broker_cluster_acl_version_info(broker)
    assert acl_cluster.broker.config.default_topic_queue_nums == 5
    assert "NewAK0001" in {a.access_key for a in accounts.plain_access_configs}
    assert version["counter"] >= 1
    async with AsyncAdminClient(addr) as anonymous:
        with pytest.raises(NoPermissionError):
            await anonymous.update_broker_config(broker, {"defaultTopicQueueNums": "6"})
    assert acl_cluster.broker.config.default_topic_queue_nums == 5
