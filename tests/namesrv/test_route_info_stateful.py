"""A Hypothesis state machine over RouteInfoManager: tables stay consistent whatever happens."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from rocketq.common.topic_config import TopicConfig
from rocketq.namesrv.route_info import RouteInfoManager
from rocketq.remoting.protocol.data_version import DataVersion

BROKERS = ["broker-a", "broker-b", "broker-c"]
TOPICS = ["T1", "T2", "T3"]


def addr_of(name: str, broker_id: int) -> str:
    return f"127.0.0.{BROKERS.index(name) + 1}:{10911 + broker_id}"


class RouteInfoMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now_ms = 1_000_000
        self.rim = RouteInfoManager(clock=lambda: self.now_ms)
        self.counter = 0

    @rule(
        name=st.sampled_from(BROKERS),
        broker_id=st.integers(0, 1),
        topics=st.sets(st.sampled_from(TOPICS)),
        cluster=st.sampled_from(["c1", "c2"]),
    )
    def register(self, name: str, broker_id: int, topics: set[str], cluster: str) -> None:
        self.counter += 1
        self.rim.register_broker(
            cluster_name=cluster,
            broker_addr=addr_of(name, broker_id),
            broker_name=name,
            broker_id=broker_id,
            ha_server_addr="",
            topic_config_table={t: TopicConfig(topic_name=t) for t in topics},
            data_version=DataVersion(timestamp=self.now_ms, counter=self.counter),
        )

    @rule(
        name=st.sampled_from(BROKERS),
        broker_id=st.integers(0, 1),
        cluster=st.sampled_from(["c1", "c2"]),
    )
    def unregister(self, name: str, broker_id: int, cluster: str) -> None:
        self.rim.unregister_broker(
            cluster_name=cluster,
            broker_addr=addr_of(name, broker_id),
            broker_name=name,
            broker_id=broker_id,
        )

    @rule(ms=st.integers(0, 200_000))
    def advance_and_scan(self, ms: int) -> None:
        self.now_ms += ms
        self.rim.scan_not_active_broker()
        for live in self.rim.broker_live_table.values():
            assert live.last_update_timestamp + 120_000 >= self.now_ms

    @rule(name=st.sampled_from(BROKERS), broker_id=st.integers(0, 1))
    def connection_closed(self, name: str, broker_id: int) -> None:
        self.rim.on_channel_destroy(addr_of(name, broker_id), None)
        assert addr_of(name, broker_id) not in self.rim.broker_live_table

    @rule(topic=st.sampled_from(TOPICS))
    def delete_topic(self, topic: str) -> None:
        self.rim.delete_topic(topic)
        assert self.rim.pickup_topic_route_data(topic) is None

    @invariant()
    def tables_are_consistent(self) -> None:
        rim = self.rim
        for name, data in rim.broker_addr_table.items():
            assert data.broker_addrs, name
        for names in rim.cluster_addr_table.values():
            assert names
        for topic, queue_datas in rim.topic_queue_table.items():
            assert queue_datas, topic
            assert queue_datas.keys() <= rim.broker_addr_table.keys(), topic
        for topic in TOPICS:
            route = rim.pickup_topic_route_data(topic)
            if route is None:
                continue
            assert {b.broker_name for b in route.broker_datas} <= {
                q.broker_name for q in route.queue_datas
            }
            assert all(b.broker_addrs for b in route.broker_datas)


TestRouteInfoMachine = RouteInfoMachine.TestCase
