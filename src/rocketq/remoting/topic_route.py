"""Route answers of the name server (remoting.md §3.1.1, §3.1.4): TopicRouteData, ClusterInfo.

Written as standard JSON with quoted ``brokerAddrs`` keys (C++ and Java accept that); perm and
queue counts are JSON numbers because C++ reads them with ``asInt()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self

from rocketq.common.json_body import JsonBody, as_int, as_object, as_str

#: The broker id of a master (MixAll.MASTER_ID); slaves have ids above it.
MASTER_ID = 0


@dataclass(slots=True, kw_only=True)
class QueueData(JsonBody):
    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_sys_flag: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "brokerName": self.broker_name,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        sys_flag = obj.get("topicSysFlag", obj.get("topicSynFlag", 0))
        return cls(
            broker_name=as_str(obj, "brokerName"),
            read_queue_nums=as_int(obj, "readQueueNums"),
            write_queue_nums=as_int(obj, "writeQueueNums"),
            perm=as_int(obj, "perm"),
            topic_sys_flag=as_int({"f": sys_flag}, "f"),
        )


@dataclass(slots=True, kw_only=True)
class BrokerData(JsonBody):
    cluster: str
    broker_name: str
    broker_addrs: dict[int, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "brokerAddrs": {str(k): v for k, v in sorted(self.broker_addrs.items())},
            "brokerName": self.broker_name,
            "cluster": self.cluster,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        addrs = as_object(obj.get("brokerAddrs"), "brokerAddrs")
        return cls(
            cluster=as_str(obj, "cluster"),
            broker_name=as_str(obj, "brokerName"),
            broker_addrs={as_int({"k": k}, "k"): str(v) for k, v in addrs.items()},
        )

    def select_broker_addr(self) -> str | None:
        """The master address, else any slave's (RocketMQ's ``selectBrokerAddr``)."""
        master = self.broker_addrs.get(MASTER_ID)
        if master is not None:
            return master
        return next(iter(self.broker_addrs.values()), None)


@dataclass(slots=True, kw_only=True)
class TopicRouteData(JsonBody):
    queue_datas: list[QueueData] = field(default_factory=list)
    broker_datas: list[BrokerData] = field(default_factory=list)
    filter_server_table: dict[str, list[str]] = field(default_factory=dict)
    order_topic_conf: str | None = None

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "brokerDatas": [b.to_json() for b in self.broker_datas],
            "filterServerTable": {k: list(v) for k, v in self.filter_server_table.items()},
            "queueDatas": [q.to_json() for q in self.queue_datas],
        }
        if self.order_topic_conf is not None:
            obj["orderTopicConf"] = self.order_topic_conf
        return obj

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        filters = as_object(obj.get("filterServerTable"), "filterServerTable")
        order = obj.get("orderTopicConf")
        return cls(
            queue_datas=[
                QueueData.from_json(as_object(q, "QueueData")) for q in _list(obj, "queueDatas")
            ],
            broker_datas=[
                BrokerData.from_json(as_object(b, "BrokerData")) for b in _list(obj, "brokerDatas")
            ],
            filter_server_table={k: [str(a) for a in v or []] for k, v in filters.items()},
            order_topic_conf=None if order is None else str(order),
        )


@dataclass(slots=True, kw_only=True)
class ClusterInfo(JsonBody):
    broker_addr_table: dict[str, BrokerData] = field(default_factory=dict)
    cluster_addr_table: dict[str, set[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "brokerAddrTable": {k: v.to_json() for k, v in self.broker_addr_table.items()},
            "clusterAddrTable": {k: sorted(v) for k, v in self.cluster_addr_table.items()},
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        brokers = as_object(obj.get("brokerAddrTable"), "brokerAddrTable")
        clusters = as_object(obj.get("clusterAddrTable"), "clusterAddrTable")
        return cls(
            broker_addr_table={
                k: BrokerData.from_json(as_object(v, "BrokerData")) for k, v in brokers.items()
            },
            cluster_addr_table={k: {str(n) for n in v or []} for k, v in clusters.items()},
        )


@dataclass(slots=True, kw_only=True)
class TopicList(JsonBody):
    topic_list: set[str] = field(default_factory=set)
    broker_addr: str | None = None

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"topicList": sorted(self.topic_list)}
        if self.broker_addr is not None:
            obj["brokerAddr"] = self.broker_addr
        return obj

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        addr = obj.get("brokerAddr")
        return cls(
            topic_list={str(t) for t in _list(obj, "topicList")},
            broker_addr=None if addr is None else str(addr),
        )


@dataclass(slots=True, kw_only=True)
class KVTable(JsonBody):
    table: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"table": dict(self.table)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        table = as_object(obj.get("table"), "table")
        return cls(table={str(k): str(v) for k, v in table.items()})


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []
