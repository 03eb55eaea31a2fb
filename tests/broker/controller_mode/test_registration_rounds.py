"""The periodic registration of a controller-mode broker group (issue 22, 100,000 topics): a
master sends its table only when a name server is behind or its epoch changed, a slave sends
no topics, and the name server still routes to the master of the higher epoch after a switch."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.common.topic_config import TopicConfig
from rocketq.namesrv.server import NamesrvController
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.controller_headers import ElectMasterRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_namesrv
from rocketq.testing.controller_mode import CLUSTER, manager, run_controller_mode_broker
from rocketq.testing.controller_wire import ControllerGroup
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(90)

FILL = 2000  # topics: a full body is ~300 KB, a slave's or a heartbeat's well under 1 KB


@contextlib.asynccontextmanager
async def group_of_two(
    tmp: Path,
) -> AsyncIterator[tuple[list[BrokerController], NamesrvController, str]]:
    controllers = ControllerGroup(tmp / "controller", size=1)
    await controllers.start_all()
    try:
        leader = await controllers.leader()
        async with run_namesrv() as ns, contextlib.AsyncExitStack() as stack:
            brokers = [
                await stack.enter_async_context(
                    run_controller_mode_broker(tmp / f"b{i}", ns.addr, [leader.addr])
                )
                for i in range(2)
            ]
            yield brokers, ns, leader.addr
    finally:
        await controllers.stop_all()


def settled(brokers: list[BrokerController]) -> bool:
    managers = [manager(b) for b in brokers]
    return sum(m.is_master for m in managers) == 1 and not any(m.fenced for m in managers)


def master_of(brokers: list[BrokerController]) -> BrokerController:
    return next(b for b in brokers if manager(b).is_master)


def fill(broker: BrokerController, prefix: str) -> None:
    broker.topic_config_manager.update_topic_config_list(
        TopicConfig(topic_name=f"{prefix}{i:05d}", read_queue_nums=8, write_queue_nums=8)
        for i in range(FILL)
    )


async def test_a_master_at_the_name_servers_version_resends_nothing_until_its_epoch_changes(
    tmp_path: Path,
) -> None:
    async with group_of_two(tmp_path) as (brokers, ns, controller_addr):
        assert await until(lambda: settled(brokers), 20)
        old = master_of(brokers)
        new = next(b for b in brokers if b is not old)
        assert await until(lambda: len(manager(old).sync_state_set) == 2, 20)
        fill(old, "Fill")
        await old.register_broker_all()  # the name server now holds the table's version
        full = sum(old.outer_api.last_register_body_sizes)
        assert full > 100_000
        routes = ns.route_info_manager
        live = routes.broker_live_table[old.broker_addr]
        live.last_update_timestamp = 0
        old.outer_api.last_register_body_sizes = []
        await old._register_periodically()
        assert old.outer_api.last_register_body_sizes == []  # nothing resent
        assert live.last_update_timestamp > 0  # the version query kept the master alive
        await new._register_periodically()  # a slave registers without topics
        assert sum(new.outer_api.last_register_body_sizes) < 1024
        assert await until(lambda: len(new.topic_config_manager.topic_config_table) >= FILL, 20)

        new.outer_api.last_register_body_sizes = []
        client = RemotingClient()
        try:
            header = ElectMasterRequestHeader(
                cluster_name=CLUSTER,
                broker_name="broker-a",
                broker_id=manager(new).broker_controller_id or 0,
                designate_elect=True,
            )
            request = RemotingCommand.create_request(
                RequestCode.CONTROLLER_ELECT_MASTER, header.to_ext_fields()
            )
            elected = await client.invoke(controller_addr, request, 10)
        finally:
            await client.shutdown()
        assert elected.code == ResponseCode.SUCCESS, elected.remark
        assert await until(lambda: manager(new).is_master and not manager(old).is_master, 20)
        # the new epoch registered the whole table at once; the name server routes to it
        assert await until(lambda: sum(new.outer_api.last_register_body_sizes) > full // 2, 20)
        addrs = routes.broker_addr_table["broker-a"].broker_addrs
        assert await until(lambda: addrs.get(0) == new.broker_addr, 20)
        route = routes.pickup_topic_route_data("Fill01999")
        assert route is not None
        assert route.broker_datas[0].broker_addrs[0] == new.broker_addr
        # and the demoted master, now a slave, sends no topics
        old.outer_api.last_register_body_sizes = []
        await old._register_periodically()
        assert 0 < sum(old.outer_api.last_register_body_sizes) < 1024
        assert addrs.get(old.config.broker_id) == old.broker_addr
