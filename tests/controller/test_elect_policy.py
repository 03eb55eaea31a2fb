"""DefaultElectPolicy's choice, including offsets more than 2^31 apart."""

from __future__ import annotations

from rocketq.controller.elect_policy import elect, election_order
from rocketq.controller.heartbeat import BrokerHeartbeatManager, BrokerLiveInfo

NOW = 10_000


def table(*infos: tuple[int, int, int, int]) -> BrokerHeartbeatManager:
    """(broker id, epoch, max offset, priority) for each live broker of c/b."""
    manager = BrokerHeartbeatManager()
    for broker_id, epoch, max_offset, priority in infos:
        manager.on_broker_heartbeat(
            NOW,
            cluster_name="c",
            broker_name="b",
            broker_addr=f"h:{broker_id}",
            broker_id=broker_id,
            epoch=epoch,
            max_offset=max_offset,
            election_priority=priority,
        )
    return manager


def choose(
    manager: BrokerHeartbeatManager,
    sss: set[int],
    *,
    old: int | None = None,
    prefer: int | None = None,
    everyone: set[int] | None = None,
) -> int | None:
    return elect(
        "c",
        "b",
        sync_state_brokers=sss,
        all_replica_brokers=everyone,
        old_master=old,
        prefer_broker_id=prefer,
        is_alive=manager.alive_predicate(NOW),
        live_info=manager.get_broker_live_info,
    )


def test_election_between_offsets_more_than_2_pow_31_apart_picks_the_longer_log() -> None:
    behind, ahead = 1 << 20, (1 << 20) + (1 << 31) + 7  # Java's (int)(o2 - o1) is negative here
    manager = table((1, 5, behind, 0), (2, 5, ahead, 0))
    assert choose(manager, {1, 2}) == 2
    manager = table((1, 5, ahead, 0), (2, 5, behind, 0))
    assert choose(manager, {1, 2}) == 1
    far = table((1, 5, (1 << 62), 0), (2, 5, (1 << 62) + (1 << 32), 0), (3, 5, 3, 0))
    assert choose(far, {1, 2, 3}) == 2


def test_java_comparator_would_have_elected_the_stale_replica() -> None:
    o1, o2 = 0, (1 << 31) + 1
    java_int = ((o2 - o1 + (1 << 31)) % (1 << 32)) - (1 << 31)  # (int) (o2 - o1)
    assert java_int < 0  # Java: o1 (less data) sorts first
    info = [
        BrokerLiveInfo(
            cluster_name="c",
            broker_name="b",
            broker_addr="h",
            broker_id=i,
            last_update_timestamp_ms=0,
            heartbeat_timeout_ms=1,
            epoch=1,
            max_offset=o,
        )
        for i, o in ((1, o1), (2, o2))
    ]
    assert min(info, key=election_order).broker_id == 2


def test_epoch_beats_offset_and_priority_breaks_ties() -> None:
    manager = table((1, 4, 900, 0), (2, 5, 100, 9), (3, 5, 100, 1))
    assert choose(manager, {1, 2, 3}) == 3
    assert choose(table((1, 5, 100, 0), (2, 5, 100, 0)), {1, 2}) == 1


def test_old_master_alive_in_the_set_stays() -> None:
    manager = table((1, 1, 0, 0), (2, 1, 999, 0))
    assert choose(manager, {1, 2}, old=1) == 1


def test_only_live_in_sync_replicas_unless_unclean() -> None:
    manager = table((3, 1, 999, 0))
    assert choose(manager, {1, 2}) is None
    assert choose(manager, {1, 2}, everyone={1, 2, 3}) == 3


def test_a_designated_broker_is_taken_only_when_it_is_a_live_candidate() -> None:
    manager = table((1, 1, 999, 0), (2, 1, 0, 0))
    assert choose(manager, {1, 2}, old=1, prefer=2) == 2
    assert choose(manager, {1, 2}, prefer=3) is None
