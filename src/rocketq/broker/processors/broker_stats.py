"""VIEW_BROKER_STATS_DATA (315): one statistic of the broker over the last minute, hour and
day (AdminBrokerProcessor.ViewBrokerStatsData; mqadmin statsAll and the dashboard read it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocketq.broker.stats_item import StatsSnapshot
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import ViewBrokerStatsDataRequestHeader
from rocketq.remoting.protocol.stats_bodies import (
    BrokerStatsData,
    BrokerStatsItem,
)
from rocketq.response_code import ResponseCode

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext


def _item(snapshot: StatsSnapshot) -> BrokerStatsItem:
    return BrokerStatsItem(sum=snapshot.sum, tps=snapshot.tps, avgpt=snapshot.avgpt)


class BrokerStatsProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        self.broker.remoting_server.register_processor(
            RequestCode.VIEW_BROKER_STATS_DATA, self.view_broker_stats_data
        )

    async def view_broker_stats_data(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ViewBrokerStatsDataRequestHeader.from_ext_fields(request.ext_fields)
        manager = self.broker.broker_stats_manager
        stats = manager.sets.get(h.stats_name)
        item = None if stats is None else stats.get(h.stats_key)
        if item is None:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, f"The stats <{h.stats_name}> <{h.stats_key}> not exist"
            )
        now = manager.clock_ms()
        data = BrokerStatsData(
            stats_minute=_item(item.stats_in_minute(now)),
            stats_hour=_item(item.stats_in_hour(now)),
            stats_day=_item(item.stats_in_day(now)),
        )
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=data.encode())
