"""Broker liveness: soft state from heartbeats, never in the log (RocketMQ 5's
``controller/impl/heartbeat/DefaultBrokerHeartbeatManager`` and ``BrokerLiveInfo``).

Theory of operation. Every broker heartbeats (BROKER_HEARTBEAT, 904) to every controller, so
each controller, leader or not, keeps its own table: last seen, the heartbeat timeout the
broker asked for, and the election inputs (epoch, max offset, confirm offset, priority). Only
the leader acts on it. Time is whatever monotonic milliseconds the caller passes in: this
module has no clock, no threads and no IO.

- A broker is *active* while ``last_seen + timeout >= now`` (``isBrokerActive``).
- ``scan_not_active_broker(now)`` removes and returns the expired brokers; the leader then
  elects for their broker sets (``scanNotActiveBroker`` every ``scanNotActiveBrokerInterval``).
- A closed channel is evidence at once: ``on_broker_channel_close`` removes and returns it.
- **A new leader judges each broker by its own clock** (``on_become_leader``). Followers keep
  the table too, so an entry still active when leadership arrives expires as on any leader
  (``last_seen + timeout``): a master paused just after a controller change is replaced one
  heartbeat timeout after its last heartbeat, not a grace after the change. An entry already
  expired then is stale evidence (our side may have been cut off): it gets one timeout from
  the leadership to reach us. A broker *absent* from the table cannot be judged: while
  ``in_grace`` (one timeout from the leadership: the longest the table's brokers declared,
  read at each call, so a first heartbeat into an empty table ends the default 10 s wait at
  the declared 3 s) the caller holds the inactive-master scan. RocketMQ has no such wait: a
  fresh DLedger leader may elect away from a healthy master it has not heard yet.
- Election inputs only move forward (as Java): a heartbeat replaces them when its epoch is
  higher, or its epoch equal and its max offset higher.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: BrokerHeartbeatManager.DEFAULT_BROKER_CHANNEL_EXPIRED_TIME: a heartbeat without a timeout.
DEFAULT_BROKER_CHANNEL_EXPIRED_TIME_MS = 10_000
#: DefaultBrokerHeartbeatManager: a heartbeat without a priority ranks last.
DEFAULT_ELECTION_PRIORITY = (1 << 31) - 1

#: (clusterName, brokerName, brokerId): BrokerIdentityInfo.
BrokerIdentity = tuple[str, str, int]
#: is this broker alive? (clusterName, brokerName, brokerId) -> bool: BrokerValidPredicate.
AlivePredicate = Callable[[str, str, int], bool]


@dataclass(slots=True, kw_only=True)
class BrokerLiveInfo:
    """BrokerLiveInfo.java. ``channel`` is the caller's handle for the broker's connection."""

    cluster_name: str
    broker_name: str
    broker_addr: str
    broker_id: int
    last_update_timestamp_ms: int
    heartbeat_timeout_ms: int
    epoch: int = -1
    max_offset: int = -1
    confirm_offset: int = -1
    election_priority: int = DEFAULT_ELECTION_PRIORITY
    channel: object = None

    def is_active(self, now_ms: int) -> bool:
        return self.last_update_timestamp_ms + self.heartbeat_timeout_ms >= now_ms


class BrokerHeartbeatManager:
    """The liveness table of one controller (DefaultBrokerHeartbeatManager without threads)."""

    def __init__(self, *, default_timeout_ms: int = DEFAULT_BROKER_CHANNEL_EXPIRED_TIME_MS):
        self.default_timeout_ms = default_timeout_ms
        self._table: dict[BrokerIdentity, BrokerLiveInfo] = {}
        self._leader_since_ms: int | None = None

    def on_broker_heartbeat(
        self,
        now_ms: int,
        *,
        cluster_name: str,
        broker_name: str,
        broker_addr: str,
        broker_id: int,
        timeout_ms: int | None = None,
        channel: object = None,
        epoch: int | None = None,
        max_offset: int | None = None,
        confirm_offset: int | None = None,
        election_priority: int | None = None,
    ) -> None:
        """Record a heartbeat (``onBrokerHeartbeat``); absent fields take Java's defaults."""
        key = (cluster_name, broker_name, broker_id)
        new = BrokerLiveInfo(
            cluster_name=cluster_name,
            broker_name=broker_name,
            broker_addr=broker_addr,
            broker_id=broker_id,
            last_update_timestamp_ms=now_ms,
            heartbeat_timeout_ms=self.default_timeout_ms if timeout_ms is None else timeout_ms,
            epoch=-1 if epoch is None else epoch,
            max_offset=-1 if max_offset is None else max_offset,
            confirm_offset=-1 if confirm_offset is None else confirm_offset,
            election_priority=(
                DEFAULT_ELECTION_PRIORITY if election_priority is None else election_priority
            ),
            channel=channel,
        )
        prev = self._table.get(key)
        if prev is None:
            self._table[key] = new
            return
        prev.last_update_timestamp_ms = now_ms
        prev.heartbeat_timeout_ms = new.heartbeat_timeout_ms
        prev.election_priority = new.election_priority
        prev.broker_addr = broker_addr
        if channel is not None:
            prev.channel = channel
        if new.epoch > prev.epoch or (new.epoch == prev.epoch and new.max_offset > prev.max_offset):
            prev.epoch, prev.max_offset = new.epoch, new.max_offset
            prev.confirm_offset = new.confirm_offset

    def on_become_leader(self, now_ms: int) -> None:
        """Start the grace for absent brokers; give each stale entry one timeout from now."""
        self._leader_since_ms = now_ms
        for info in self._table.values():
            if not info.is_active(now_ms):
                info.last_update_timestamp_ms = now_ms

    def longest_timeout_ms(self) -> int:
        """The longest heartbeat timeout the table's brokers declared (the default if none)."""
        return max(
            (i.heartbeat_timeout_ms for i in self._table.values()), default=self.default_timeout_ms
        )

    def in_grace(self, now_ms: int) -> bool:
        """Whether a broker absent from the table may still be alive and on its way to us."""
        since = self._leader_since_ms
        return since is not None and now_ms < since + self.longest_timeout_ms()

    def scan_not_active_broker(self, now_ms: int) -> list[BrokerLiveInfo]:
        """Remove and return the brokers whose heartbeat expired."""
        expired = [i for i in self._table.values() if not i.is_active(now_ms)]
        for info in expired:
            del self._table[(info.cluster_name, info.broker_name, info.broker_id)]
        return expired

    def on_broker_channel_close(self, channel: object) -> BrokerLiveInfo | None:
        """Remove and return the broker whose connection closed (``onBrokerChannelClose``)."""
        for key, info in self._table.items():
            if info.channel is channel:
                del self._table[key]
                return info
        return None

    def get_broker_live_info(
        self, cluster_name: str, broker_name: str, broker_id: int
    ) -> BrokerLiveInfo | None:
        return self._table.get((cluster_name, broker_name, broker_id))

    def is_broker_active(
        self, cluster_name: str, broker_name: str, broker_id: int, now_ms: int
    ) -> bool:
        info = self._table.get((cluster_name, broker_name, broker_id))
        return info is not None and info.is_active(now_ms)

    def alive_predicate(self, now_ms: int) -> AlivePredicate:
        """``is_broker_active`` at ``now_ms``, for the request handlers and the election."""
        return lambda cluster, name, broker_id: self.is_broker_active(
            cluster, name, broker_id, now_ms
        )

    def get_active_brokers_num(self, now_ms: int) -> dict[str, dict[str, int]]:
        """Active brokers by cluster and broker name (the ``active_broker_num`` metric)."""
        counts: dict[str, dict[str, int]] = {}
        for info in self._table.values():
            if info.is_active(now_ms):
                per_cluster = counts.setdefault(info.cluster_name, {})
                per_cluster[info.broker_name] = per_cluster.get(info.broker_name, 0) + 1
        return counts
