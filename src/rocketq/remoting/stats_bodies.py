"""VIEW_BROKER_STATS_DATA (315): its request header and ``BrokerStatsData`` body (RocketMQ's
``ViewBrokerStatsDataRequestHeader``, ``BrokerStatsData`` and ``BrokerStatsItem``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rocketq.remoting.header_base import CommandCustomHeader


@dataclass(frozen=True, kw_only=True, slots=True)
class ViewBrokerStatsDataRequestHeader(CommandCustomHeader):
    stats_name: str
    stats_key: str


@dataclass(frozen=True, slots=True)
class BrokerStatsItem:
    sum: int = 0
    tps: float = 0.0
    avgpt: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"sum": self.sum, "tps": self.tps, "avgpt": self.avgpt}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BrokerStatsItem:
        return cls(
            sum=int(obj.get("sum", 0)),
            tps=float(obj.get("tps", 0.0)),
            avgpt=float(obj.get("avgpt", 0.0)),
        )


@dataclass(frozen=True, slots=True)
class BrokerStatsData:
    stats_minute: BrokerStatsItem = field(default_factory=BrokerStatsItem)
    stats_hour: BrokerStatsItem = field(default_factory=BrokerStatsItem)
    stats_day: BrokerStatsItem = field(default_factory=BrokerStatsItem)

    def encode(self) -> bytes:
        obj = {
            "statsDay": self.stats_day.to_json(),
            "statsHour": self.stats_hour.to_json(),
            "statsMinute": self.stats_minute.to_json(),
        }
        return json.dumps(obj, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, body: bytes) -> BrokerStatsData:
        obj = json.loads(body.decode("utf-8"))
        return cls(
            stats_minute=BrokerStatsItem.from_json(obj.get("statsMinute") or {}),
            stats_hour=BrokerStatsItem.from_json(obj.get("statsHour") or {}),
            stats_day=BrokerStatsItem.from_json(obj.get("statsDay") or {}),
        )
