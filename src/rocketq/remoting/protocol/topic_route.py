"""Route answers of the name server: TopicRouteData with its QueueData and BrokerData,
ClusterInfo, TopicList and KVTable (RocketMQ's ``remoting/protocol/route`` and ``body``).

Written as standard JSON with quoted ``brokerAddrs`` keys, which C++ and Java both read (a Java
name server writes them bare, as ``fastjson.loads`` accepts); perm and queue counts are JSON
numbers because C++ reads them with ``asInt()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.remoting.protocol.json_body import JsonBody, json_field

#: The broker id of a master (MixAll.MASTER_ID); slaves have ids above it.
MASTER_ID = 0


@dataclass(slots=True, kw_only=True)
class QueueData(JsonBody):
    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    # 4.x before 4.9 spelled it topicSynFlag
    topic_sys_flag: int = field(default=0, metadata=json_field(aliases=("topicSynFlag",)))


def _text_keys(addrs: dict[int, str]) -> dict[str, str]:
    return {str(k): v for k, v in sorted(addrs.items())}


@dataclass(slots=True, kw_only=True)
class BrokerData(JsonBody):
    cluster: str
    broker_name: str
    broker_addrs: dict[int, str] = field(
        default_factory=dict, metadata=json_field(write=_text_keys)
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


@dataclass(slots=True, kw_only=True)
class ClusterInfo(JsonBody):
    broker_addr_table: dict[str, BrokerData] = field(default_factory=dict)
    cluster_addr_table: dict[str, set[str]] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class TopicList(JsonBody):
    topic_list: set[str] = field(default_factory=set)
    broker_addr: str | None = None


@dataclass(slots=True, kw_only=True)
class KVTable(JsonBody):
    table: dict[str, str] = field(default_factory=dict)
