"""RouteInfoManager as pure state, with an injected clock."""

from __future__ import annotations

from rocketq.common.topic_config import PERM_READ, PERM_WRITE, TopicConfig
from rocketq.namesrv.route_info import RegisterBrokerResult, RouteInfoManager
from rocketq.remoting.protocol.data_version import DataVersion


class FakeClock:
    def __init__(self) -> None:
        self.now_ms = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now_ms


def topics(*specs: tuple[str, int]) -> dict[str, TopicConfig]:
    return {
        name: TopicConfig(topic_name=name, read_queue_nums=n, write_queue_nums=n, perm=6)
        for name, n in specs
    }


def register(
    rim: RouteInfoManager,
    *,
    name: str = "broker-a",
    addr: str = "127.0.0.1:10911",
    broker_id: int = 0,
    table: dict[str, TopicConfig] | None = None,
    version: DataVersion | None = None,
    cluster: str = "DefaultCluster",
    channel: object | None = None,
) -> RegisterBrokerResult:
    return rim.register_broker(
        cluster_name=cluster,
        broker_addr=addr,
        broker_name=name,
        broker_id=broker_id,
        ha_server_addr=addr.replace("10911", "10912"),
        topic_config_table=table if table is not None else topics(("T", 4)),
        data_version=version or DataVersion(timestamp=1, counter=1),
        filter_server_list=[],
        channel=channel,
    )


def test_master_registration_creates_the_topic_route() -> None:
    rim = RouteInfoManager(clock=FakeClock())
    register(rim)
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert [(q.broker_name, q.read_queue_nums, q.perm) for q in route.queue_datas] == [
        ("broker-a", 4, 6)
    ]
    assert route.broker_datas[0].broker_addrs == {0: "127.0.0.1:10911"}
    assert rim.pickup_topic_route_data("missing") is None


def test_slave_registration_returns_master_and_ha_addresses() -> None:
    rim = RouteInfoManager(clock=FakeClock())
    assert register(rim).master_addr is None
    result = register(rim, addr="127.0.0.1:20911", broker_id=1)
    assert result.master_addr == "127.0.0.1:10911"
    assert result.ha_server_addr == "127.0.0.1:10912"
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.broker_datas[0].broker_addrs == {0: "127.0.0.1:10911", 1: "127.0.0.1:20911"}


def test_slave_topic_table_never_writes_queue_data() -> None:
    rim = RouteInfoManager(clock=FakeClock())
    register(rim, broker_id=1, table=topics(("OnlySlave", 2)))
    assert rim.pickup_topic_route_data("OnlySlave") is None


def test_same_data_version_keeps_old_queue_data_and_new_version_replaces_it() -> None:
    rim = RouteInfoManager(clock=FakeClock())
    register(rim, table=topics(("T", 4)))
    register(rim, table=topics(("T", 8)))
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.queue_datas[0].read_queue_nums == 4
    register(rim, table=topics(("T", 8)), version=DataVersion(timestamp=2, counter=2))
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.queue_datas[0].read_queue_nums == 8


def test_broker_silent_for_120_seconds_is_dropped_with_its_routes() -> None:
    clock = FakeClock()
    rim = RouteInfoManager(clock=clock)
    register(rim)
    register(rim, name="broker-b", addr="127.0.0.1:30911", table=topics(("T", 2), ("U", 1)))
    clock.now_ms += 60_000
    register(rim, name="broker-b", addr="127.0.0.1:30911", table=topics(("T", 2), ("U", 1)))
    clock.now_ms += 60_001
    dropped = rim.scan_not_active_broker()
    assert len(dropped) == 1
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert [q.broker_name for q in route.queue_datas] == ["broker-b"]
    assert "broker-a" not in rim.broker_addr_table
    assert rim.cluster_addr_table == {"DefaultCluster": {"broker-b"}}
    clock.now_ms += 120_001
    assert len(rim.scan_not_active_broker()) == 1
    assert rim.get_all_topic_list() == set()
    assert rim.cluster_addr_table == {}


def test_data_version_refresh_keeps_a_broker_alive() -> None:
    clock = FakeClock()
    rim = RouteInfoManager(clock=clock)
    register(rim)
    clock.now_ms += 100_000
    assert not rim.is_broker_topic_config_changed(
        "127.0.0.1:10911", DataVersion(timestamp=1, counter=1)
    )
    rim.update_broker_info_update_timestamp("127.0.0.1:10911")
    clock.now_ms += 100_000
    assert rim.scan_not_active_broker() == []


def test_closed_channel_drops_the_broker_registered_through_it() -> None:
    rim = RouteInfoManager(clock=FakeClock())
    channel = object()
    register(rim, channel=channel)
    assert rim.on_channel_destroy("127.0.0.1:55555", object()) is None
    assert rim.on_channel_destroy("127.0.0.1:55555", channel) == "127.0.0.1:10911"
    assert rim.pickup_topic_route_data("T") is None


def test_unregister_removes_broker_and_topics() -> None:
    rim = RouteInfoManager(clock=FakeClock())
    register(rim)
    rim.unregister_broker(
        cluster_name="DefaultCluster",
        broker_addr="127.0.0.1:10911",
        broker_name="broker-a",
        broker_id=0,
    )
    assert rim.pickup_topic_route_data("T") is None
    assert rim.get_all_cluster_info().broker_addr_table == {}


def test_a_stale_broker_leaving_under_a_taken_id_keeps_the_new_holders_entry() -> None:
    # RocketMQ 5 removes by address: the old master, now gone, unregisters as id 0 after the
    # new master of its group registered as id 0 from another address
    rim = RouteInfoManager(clock=FakeClock())
    register(rim, addr="127.0.0.1:10911")
    register(rim, addr="127.0.0.1:20911")
    rim.unregister_broker(
        cluster_name="DefaultCluster",
        broker_addr="127.0.0.1:10911",
        broker_name="broker-a",
        broker_id=0,
    )
    table = rim.get_all_cluster_info().broker_addr_table
    assert table["broker-a"].broker_addrs == {0: "127.0.0.1:20911"}
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.broker_datas[0].broker_addrs == {0: "127.0.0.1:20911"}


def test_cluster_queries_and_write_permission() -> None:
    rim = RouteInfoManager(clock=FakeClock())
    register(rim, table=topics(("T", 4), ("U", 4)))
    register(rim, name="broker-x", addr="127.0.0.1:40911", cluster="Other", table=topics(("X", 1)))
    assert rim.get_topics_by_cluster("DefaultCluster") == {"T", "U"}
    assert rim.get_topics_by_cluster("Other") == {"X"}
    names, addr = rim.get_system_topic_list()
    assert names == {"DefaultCluster", "Other", "broker-a", "broker-x"}
    assert addr in {"127.0.0.1:10911", "127.0.0.1:40911"}
    assert rim.wipe_write_perm_of_broker("broker-a") == 2
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.queue_datas[0].perm == PERM_READ
    assert rim.add_write_perm_of_broker("broker-a") == 2
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.queue_datas[0].perm == PERM_READ | PERM_WRITE
    rim.delete_topic("U")
    assert rim.get_all_topic_list() == {"T", "X"}
    info = rim.get_all_cluster_info()
    assert info.cluster_addr_table == {"DefaultCluster": {"broker-a"}, "Other": {"broker-x"}}


def test_two_masters_of_one_name_keep_the_higher_state_version() -> None:
    """RocketMQ 5 (PR #6317): a controller-mode master stamps its epoch as stateVersion; a
    stale master's id-0 claim is ignored, the newer one replaces an older claim."""
    rim = RouteInfoManager(clock=FakeClock())
    register(
        rim, addr="127.0.0.1:20911", version=DataVersion(timestamp=1, counter=1, state_version=3)
    )
    stale = register(
        rim, addr="127.0.0.1:10911", version=DataVersion(timestamp=2, counter=9, state_version=2)
    )
    assert stale.master_addr is None
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.broker_datas[0].broker_addrs == {0: "127.0.0.1:20911"}
    assert "127.0.0.1:10911" not in rim.broker_live_table
    register(
        rim, addr="127.0.0.1:30911", version=DataVersion(timestamp=3, counter=1, state_version=4)
    )
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.broker_datas[0].broker_addrs == {0: "127.0.0.1:30911"}


def test_the_demoted_master_reregisters_under_its_controller_id() -> None:
    """Switch master to slave: <0, addr> goes, <2, addr> comes (one record per address)."""
    rim = RouteInfoManager(clock=FakeClock())
    register(
        rim, addr="127.0.0.1:10911", version=DataVersion(timestamp=1, counter=1, state_version=1)
    )
    register(
        rim, addr="127.0.0.1:20911", version=DataVersion(timestamp=1, counter=1, state_version=2)
    )
    result = register(rim, addr="127.0.0.1:10911", broker_id=2)
    assert result.master_addr == "127.0.0.1:20911"
    route = rim.pickup_topic_route_data("T")
    assert route is not None
    assert route.broker_datas[0].broker_addrs == {0: "127.0.0.1:20911", 2: "127.0.0.1:10911"}


def test_a_part_with_a_seen_version_adds_its_new_topics_and_keeps_known_ones() -> None:
    """A split registration's later parts carry the version the first part set; the name
    server takes the topics new to it (RouteInfoManager.isTopicConfigChanged), not changes."""
    rim = RouteInfoManager()
    version = DataVersion(timestamp=5, counter=5)
    register(rim, table=topics(("A", 4), ("B", 4)), version=version)
    register(rim, table=topics(("C", 2), ("A", 8)), version=version)
    assert rim.pickup_topic_route_data("C") is not None
    route_a = rim.pickup_topic_route_data("A")
    assert route_a is not None
    assert route_a.queue_datas[0].write_queue_nums == 4  # a known topic: the version was seen


def test_an_increment_chains_only_on_the_version_held() -> None:
    """rocketq's base version: an increment on the version held makes the broker current; an
    increment on another (the name server restarted or missed one) leaves it unknown, so the
    broker's QUERY_DATA_VERSION finds it behind, and keeps the epoch for id-0 claims."""
    rim = RouteInfoManager(clock=FakeClock())
    v1 = DataVersion(timestamp=1, counter=1, state_version=2)
    v2 = DataVersion(timestamp=2, counter=2, state_version=2)
    v3 = DataVersion(timestamp=3, counter=3, state_version=2)
    addr = "127.0.0.1:10911"
    register(rim, version=v1)
    rim.register_broker(
        cluster_name="DefaultCluster",
        broker_addr=addr,
        broker_name="broker-a",
        broker_id=0,
        ha_server_addr="",
        topic_config_table=topics(("U", 2)),
        data_version=v2,
        base_version=v1,
    )
    assert not rim.is_broker_topic_config_changed(addr, v2)
    rim.register_broker(
        cluster_name="DefaultCluster",
        broker_addr=addr,
        broker_name="broker-a",
        broker_id=0,
        ha_server_addr="",
        topic_config_table=topics(("W", 2)),
        data_version=v3,
        base_version=v1,  # v2 is held: v3's increment missed what came between
    )
    assert rim.is_broker_topic_config_changed(addr, v3)
    assert rim.pickup_topic_route_data("W") is not None  # its topics are taken all the same
    held = rim.query_broker_topic_config(addr)
    assert held is not None
    assert held.state_version == 2


def test_a_later_part_of_a_split_table_keeps_the_version_a_create_registered_meanwhile() -> None:
    """Part 1 of a split full registration sets the table's version, a create's increment
    chains on it, then part 2 (its base its own version) adds its topics and leaves the
    create's version held: the broker's next QUERY_DATA_VERSION finds the name server current."""
    rim = RouteInfoManager(clock=FakeClock())
    full = DataVersion(timestamp=5, counter=5, state_version=1)
    created = DataVersion(timestamp=6, counter=6, state_version=1)
    addr = "127.0.0.1:10911"

    def part(table: dict[str, TopicConfig], version: DataVersion, base: DataVersion | None) -> None:
        rim.register_broker(
            cluster_name="DefaultCluster",
            broker_addr=addr,
            broker_name="broker-a",
            broker_id=0,
            ha_server_addr="",
            topic_config_table=table,
            data_version=version,
            base_version=base,
        )

    part(topics(("P1", 4)), full, None)
    part(topics(("New", 2)), created, full)
    part(topics(("P2", 4), ("New", 9)), full, full)
    assert not rim.is_broker_topic_config_changed(addr, created)
    assert rim.pickup_topic_route_data("P2") is not None
    route = rim.pickup_topic_route_data("New")
    assert route is not None
    assert route.queue_datas[0].write_queue_nums == 2  # the create's, not the older part's
    other = "127.0.0.1:20911"  # a name server that missed part 1: unknown, the table next time
    rim.register_broker(
        cluster_name="DefaultCluster",
        broker_addr=other,
        broker_name="broker-b",
        broker_id=0,
        ha_server_addr="",
        topic_config_table=topics(("Q2", 4)),
        data_version=full,
        base_version=full,
    )
    assert rim.is_broker_topic_config_changed(other, full)
