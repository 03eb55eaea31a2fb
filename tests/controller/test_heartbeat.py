"""The liveness table: expiry scans, closed channels, a new leader's grace, monotone inputs."""

from __future__ import annotations

from rocketq.controller.heartbeat import BrokerHeartbeatManager

CHANNELS = {broker_id: object() for broker_id in range(4)}  # a connection handle per broker


def beat(m: BrokerHeartbeatManager, now: int, broker_id: int, **kw: int) -> None:
    m.on_broker_heartbeat(
        now,
        cluster_name="c",
        broker_name="b",
        broker_addr=f"h:{broker_id}",
        broker_id=broker_id,
        timeout_ms=3_000,
        channel=CHANNELS[broker_id],
        **kw,
    )


def test_scan_removes_and_returns_only_expired_brokers() -> None:
    m = BrokerHeartbeatManager()
    beat(m, 0, 1)
    beat(m, 2_000, 2)
    assert m.scan_not_active_broker(3_000) == []
    expired = m.scan_not_active_broker(3_001)
    assert [i.broker_id for i in expired] == [1]
    assert not m.is_broker_active("c", "b", 1, 3_001)
    assert m.is_broker_active("c", "b", 2, 5_000)
    assert m.get_active_brokers_num(3_001) == {"c": {"b": 1}}


def test_a_closed_channel_removes_its_broker_at_once() -> None:
    m = BrokerHeartbeatManager()
    beat(m, 0, 1)
    beat(m, 0, 2)
    gone = m.on_broker_channel_close(CHANNELS[2])
    assert gone is not None
    assert gone.broker_id == 2
    assert m.get_broker_live_info("c", "b", 2) is None
    assert m.on_broker_channel_close(object()) is None


def test_a_new_leader_judges_a_broker_it_heard_by_that_brokers_own_clock() -> None:
    """Followers keep the table: a master whose last heartbeat reached this controller just
    before it became leader expires one timeout after that heartbeat, with no grace added."""
    m = BrokerHeartbeatManager()
    beat(m, 9_900, 1)  # then paused
    beat(m, 9_900, 2)
    m.on_become_leader(10_000)
    beat(m, 12_000, 2)
    assert m.scan_not_active_broker(12_900) == []
    assert [i.broker_id for i in m.scan_not_active_broker(12_901)] == [1]  # 9_900 + 3_000


def test_a_stale_entry_gets_one_timeout_from_the_leadership() -> None:
    """An entry already expired when leadership arrives is stale evidence (this controller may
    have been cut off): the broker gets one full timeout to reach the new leader."""
    m = BrokerHeartbeatManager()
    beat(m, 0, 1)
    m.on_become_leader(10_000)
    assert m.scan_not_active_broker(13_000) == []
    assert [i.broker_id for i in m.scan_not_active_broker(13_001)] == [1]


def test_the_grace_for_absent_brokers_is_the_longest_timeout_declared() -> None:
    """Brokers declaring 3 s (the controller profile) shorten the grace below the 10 s
    default; one broker declaring more lengthens it for all."""
    m = BrokerHeartbeatManager()  # default 10 s
    beat(m, 0, 1)  # declares 3 s
    m.on_become_leader(10_000)
    assert m.in_grace(12_999)
    assert not m.in_grace(13_000)
    m.on_broker_heartbeat(
        10_000, cluster_name="c", broker_name="b", broker_addr="h:3", broker_id=3, timeout_ms=5_000
    )
    m.on_become_leader(20_000)
    assert m.in_grace(24_999)
    assert not m.in_grace(25_000)


def test_a_first_heartbeat_into_an_empty_table_ends_the_default_wait() -> None:
    """A leader with an empty table (a restarted controller group) would wait the 10 s default;
    the first heartbeat declares 3 s and the grace ends 3 s after the leadership."""
    m = BrokerHeartbeatManager(default_timeout_ms=10_000)
    m.on_become_leader(0)
    assert m.in_grace(9_999)
    beat(m, 500, 1)
    assert m.in_grace(2_999)
    assert not m.in_grace(3_000)


def test_a_follower_is_never_in_grace() -> None:
    m = BrokerHeartbeatManager()
    assert not m.in_grace(0)


def test_election_inputs_only_move_forward() -> None:
    m = BrokerHeartbeatManager()
    beat(m, 0, 1, epoch=2, max_offset=500, confirm_offset=400, election_priority=3)
    beat(m, 100, 1, epoch=2, max_offset=300, confirm_offset=300, election_priority=1)
    info = m.get_broker_live_info("c", "b", 1)
    assert info is not None
    assert (info.epoch, info.max_offset, info.confirm_offset) == (2, 500, 400)
    assert (info.election_priority, info.last_update_timestamp_ms) == (1, 100)
    beat(m, 200, 1, epoch=3, max_offset=10, confirm_offset=5)
    assert (info.epoch, info.max_offset, info.confirm_offset) == (3, 10, 5)


def test_a_heartbeat_without_fields_takes_javas_defaults() -> None:
    m = BrokerHeartbeatManager()
    m.on_broker_heartbeat(0, cluster_name="c", broker_name="b", broker_addr="h", broker_id=1)
    info = m.get_broker_live_info("c", "b", 1)
    assert info is not None
    assert (info.epoch, info.max_offset, info.heartbeat_timeout_ms) == (-1, -1, 10_000)
    assert info.election_priority == (1 << 31) - 1
