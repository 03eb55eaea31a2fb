"""The body of VIEW_BROKER_STATS_DATA (315): ``BrokerStatsData`` of three ``BrokerStatsItem``
windows (RocketMQ's ``remoting/protocol/body`` classes; the request header is in ``headers``).

Unlike the other bodies an item's keys are written in field order, not sorted
(``{"statsDay":{"sum":..,"tps":..,"avgpt":..},"statsHour":..,"statsMinute":..}``), as rocketq
always has; fastjson readers do not care about the order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import ClassVar

from rocketq.remoting.protocol.json_body import JsonBody


@dataclass(frozen=True, slots=True)
class BrokerStatsItem(JsonBody):
    json_in_field_order: ClassVar[bool] = True

    sum: int = 0
    tps: float = 0.0
    avgpt: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerStatsData(JsonBody):
    stats_minute: BrokerStatsItem = field(default_factory=BrokerStatsItem)
    stats_hour: BrokerStatsItem = field(default_factory=BrokerStatsItem)
    stats_day: BrokerStatsItem = field(default_factory=BrokerStatsItem)

    def encode(self) -> bytes:
        return json.dumps(self.to_json(), separators=(",", ":")).encode()
