"""A controller-mode master's view of its SyncStateSet: shrink, expand, the union rule while a
change is pending, the confirm offset and the ack rule (RocketMQ 5's
``store/ha/autoswitch/AutoSwitchHAService``: ``maybeShrinkSyncStateSet``,
``maybeExpandInSyncStateSet``, ``getSyncStateSet``, ``setSyncStateSet``,
``computeConfirmOffset``). Pure: the caller passes the time, the offsets and the acks.

Theory of operation. The controller owns the set; the master only proposes changes
(CONTROLLER_ALTER_SYNC_STATE_SET) and adopts what the controller committed
(``set_sync_state_set``). Between the proposal and the answer the master acts on the **union**
of its committed set and the proposal (``sync_state_set``, the fix of apache/rocketmq issue
#5663): a send needs the acks of both the old and the new members, so

- an expanding set never acks without the joining slave, which an election may pick next;
- a shrinking set keeps waiting for the leaving slave until the shrink is committed, so a
  master fenced by a newer epoch, which can never commit a shrink, never acks alone.

A proposal made while another is pending does not replace the other in the union: the set in
force is the committed set plus **every** proposal since the last commit. The controller may
have committed the earlier one with its answer lost (a partition beginning), and may elect any
of its members; a shrink computed afterwards from the committed set would otherwise drop a
joining slave from the union (an expansion {1,3} -> {1,2,3} committed, then a shrink proposal
{1} leaving {1,3} in force: the master acks without 2, which the controller may elect). A
refused proposal stays in force (the safe side) until the controller's set is adopted.

- **Shrink**: a member leaves when it last caught up more than ``haMaxTimeSlaveNotCatchup``
  ago, or has no connection (no caught-up time at all).
- **Expand**: a slave joins when its max offset is at least the confirm offset and at least
  the start of the master's current epoch; async learners never join.
- **Confirm offset**: the lowest ack of the members, capped by the master's max offset; while
  a member has no connection (or has not acked yet) it stays where it was (apache/rocketmq
  issue #6662); a member that acked 0 holds it at 0 (RocketMQ skips such acks).
"""

from __future__ import annotations

from collections.abc import Mapping


class SyncStateSetTracker:
    """The master's SyncStateSet: committed (``local``), proposed (``pending``) and in force."""

    def __init__(
        self, local_broker_id: int, sync_state_set: frozenset[int], *, max_not_catchup_ms: int
    ) -> None:
        self.local_broker_id = local_broker_id
        self.max_not_catchup_ms = max_not_catchup_ms
        self.local: frozenset[int] = sync_state_set | {local_broker_id}
        self.pending: frozenset[int] | None = None  # the latest proposal, reported again
        self.proposed: frozenset[int] = frozenset()  # every member proposed since the commit
        self.caught_up_ms: dict[int, int] = {}

    @property
    def is_synchronizing(self) -> bool:
        return self.pending is not None

    def sync_state_set(self) -> frozenset[int]:
        """The set in force: the committed set and every proposal made since."""
        return self.local | self.proposed

    def set_sync_state_set(self, committed: frozenset[int]) -> None:
        """The controller committed (or told us) this set: adopt it, nothing pending."""
        self.local = committed
        self.pending = None
        self.proposed = frozenset()

    def update_caught_up_time(self, slave_id: int, caught_up_ms: int) -> None:
        self.caught_up_ms[slave_id] = max(self.caught_up_ms.get(slave_id, 0), caught_up_ms)

    def remove_connection(self, slave_id: int) -> None:
        """The slave's HA connection closed: it no longer counts as caught up."""
        self.caught_up_ms.pop(slave_id, None)

    def maybe_shrink(self, now_ms: int) -> frozenset[int] | None:
        """The set to propose without the lagging or unconnected slaves, else None."""
        keep = {
            member
            for member in self.local
            if member == self.local_broker_id
            or (
                member in self.caught_up_ms
                and now_ms - self.caught_up_ms[member] <= self.max_not_catchup_ms
            )
        }
        return self._propose(frozenset(keep))

    def maybe_expand(
        self,
        slave_id: int,
        slave_max_offset: int,
        *,
        confirm_offset: int,
        epoch_start_offset: int,
        is_async_learner: bool = False,
    ) -> frozenset[int] | None:
        """The set to propose with ``slave_id`` once it caught up, else None."""
        if is_async_learner or slave_id in self.local:
            return None
        if slave_max_offset < confirm_offset or slave_max_offset < epoch_start_offset:
            return None
        return self._propose(self.local | {slave_id})

    def _propose(self, proposal: frozenset[int]) -> frozenset[int] | None:
        if proposal == self.local:
            return None
        self.pending = proposal
        self.proposed |= proposal
        return proposal

    def compute_confirm_offset(
        self, max_phy_offset: int, acks: Mapping[int, int], current_confirm_offset: int
    ) -> int:
        """The lowest ack of the members in force (``acks``: slave id -> acked offset of its
        live connection), capped by the master's max offset. A member that acked 0 counts
        (RocketMQ skips acks of 0, so a member that holds nothing would let the confirm offset,
        and the consumers, run past it); one that has not acked yet holds the offset still."""
        members = self.sync_state_set() - {self.local_broker_id}
        if any(acks.get(member, -1) < 0 for member in members):
            return current_confirm_offset
        return min([max_phy_offset, *(acks[m] for m in members)])

    def all_acked(self, end_offset: int, acks: Mapping[int, int]) -> bool:
        """``allAckInSyncStateSet``: every member in force acked ``end_offset`` (the master
        has it once written)."""
        members = self.sync_state_set() - {self.local_broker_id}
        return all(acks.get(member, -1) >= end_offset for member in members)

    def in_sync_replicas_nums(self) -> int:
        """``inSyncReplicasNums``: the larger of committed and proposed while pending."""
        return max(len(self.local), len(self.pending or ()))

    def ack_offset(
        self, max_phy_offset: int, acks: Mapping[int, int], *, all_ack: bool, in_sync_replicas: int
    ) -> int:
        """The highest end offset a SYNC send may be answered for (-1: none), as
        GroupTransferService.doWaitTransfer decides: with ``all_ack`` every member in force
        holds it, else ``in_sync_replicas`` copies do, counting the master's."""
        if all_ack:
            members = self.sync_state_set() - {self.local_broker_id}
            return min([max_phy_offset, *(acks.get(m, -1) for m in members)])
        need = in_sync_replicas - 1  # copies besides the master's
        if need <= 0:
            return max_phy_offset
        ranked = sorted(acks.values(), reverse=True)
        return ranked[need - 1] if len(ranked) >= need else -1
