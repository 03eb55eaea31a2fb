"""Who becomes master (RocketMQ 5's ``controller/elect/impl/DefaultElectPolicy``).

1. Candidates are the SyncStateSet members that are alive; only when none is, and unclean
   election is enabled, all alive replicas.
2. An old master that is still a live candidate stays (unless another broker is designated).
3. A designated broker (mqadmin ``electMaster``) is taken if it is a live candidate, else none.
4. Otherwise the best by (epoch descending, max offset descending, election priority
   ascending), then the lowest broker id so the choice is deterministic.

The ordering is a sort key of Python integers, exact at any size. RocketMQ compared max offsets
as ``(int) (o2.getMaxOffset() - o1.getMaxOffset())``, which overflows when two replicas differ
by more than 2^31 bytes and could elect the one with less data (apache/rocketmq issue #10578).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rocketq.controller.heartbeat import AlivePredicate, BrokerLiveInfo

#: (clusterName, brokerName, brokerId) -> its live info if it heartbeated (BrokerLiveInfoGetter).
LiveInfoGetter = Callable[[str, str, int], BrokerLiveInfo | None]


def election_order(info: BrokerLiveInfo) -> tuple[int, int, int, int]:
    """Sort key: better candidates first (DefaultElectPolicy's comparator, without overflow)."""
    return (-info.epoch, -info.max_offset, info.election_priority, info.broker_id)


def elect(
    cluster_name: str,
    broker_name: str,
    *,
    sync_state_brokers: Iterable[int],
    all_replica_brokers: Iterable[int] | None,
    old_master: int | None,
    prefer_broker_id: int | None,
    is_alive: AlivePredicate,
    live_info: LiveInfoGetter,
) -> int | None:
    """The new master's id, or None when no broker can be elected.

    ``all_replica_brokers`` is given only when ``enableElectUncleanMaster`` is true."""
    for brokers in (sync_state_brokers, all_replica_brokers):
        if brokers is None:
            continue
        chosen = _try_elect(
            cluster_name, broker_name, brokers, old_master, prefer_broker_id, is_alive, live_info
        )
        if chosen is not None:
            return chosen
    return None


def _try_elect(
    cluster_name: str,
    broker_name: str,
    brokers: Iterable[int],
    old_master: int | None,
    prefer_broker_id: int | None,
    is_alive: AlivePredicate,
    live_info: LiveInfoGetter,
) -> int | None:
    alive = {b for b in brokers if is_alive(cluster_name, broker_name, b)}
    if not alive:
        return None
    if old_master in alive and prefer_broker_id in (None, old_master):
        return old_master
    if prefer_broker_id is not None:
        return prefer_broker_id if prefer_broker_id in alive else None
    infos = [live_info(cluster_name, broker_name, b) for b in sorted(alive)]
    ranked = sorted((i for i in infos if i is not None), key=election_order)
    if ranked:
        return ranked[0].broker_id
    return min(alive)  # alive yet no live info: Java takes any; we take the lowest id
