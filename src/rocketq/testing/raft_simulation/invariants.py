"""``RaftInvariants``: the Raft paper's safety properties (Figure 3), checked after every step.

- Election Safety: at most one leader per term.
- Leader Append-Only: a leader never overwrites or deletes entries of its log within its term.
- Log Matching: checked inductively as entries appear anywhere: an (index, term) pair always
  comes with the same data and the same previous term, so two logs that share an entry share
  everything before it.
- Leader Completeness: a node becoming leader holds every entry any node has committed.
- State Machine Safety: an index is committed and applied with one entry only, by every node,
  and each node applies in index order.

The checks are incremental (a shadow copy of each node's log tail, a map of committed and of
applied entries), so checking after every event stays cheap.
"""

from __future__ import annotations

from rocketq.controller.raft import Entry, RawNode, Role
from rocketq.controller.raft.log import RaftLog


class InvariantViolation(AssertionError):
    """A safety property of Raft does not hold; the message names it."""


class RaftInvariants:
    def __init__(self) -> None:
        self.leader_of_term: dict[int, int] = {}
        self.committed: dict[int, tuple[int, bytes]] = {}
        self.max_committed = 0
        self.applied: dict[int, tuple[int, bytes]] = {}
        self.seen: dict[tuple[int, int], tuple[bytes, int | None]] = {}
        self.shadow: dict[int, tuple[int, list[Entry]]] = {}
        self.leader_mark: dict[int, tuple[int, int, int]] = {}
        self.commit_seen: dict[int, int] = {}
        self.applied_seen: dict[int, int] = {}

    def node_down(self, node_id: int) -> None:
        for table in (self.shadow, self.leader_mark, self.commit_seen, self.applied_seen):
            table.pop(node_id, None)

    def after_step(self, node_id: int, raw: RawNode | None) -> None:
        if raw is None:
            return
        log = raw.log
        self._log_matching(node_id, log)
        self._commits(node_id, log)
        if raw.role is Role.LEADER:
            self._leader(node_id, raw.term, log)
        else:
            self.leader_mark.pop(node_id, None)

    def on_apply(self, node_id: int, entry: Entry, is_snapshot: bool) -> None:
        last = self.applied_seen.get(node_id)
        if is_snapshot:
            self._check_snapshot(entry.index, entry.term, node_id)
        elif last is not None and entry.index != last + 1:
            raise InvariantViolation(f"node {node_id} applied {entry.index} right after {last}")
        else:
            value = (entry.term, entry.data)
            if self.applied.setdefault(entry.index, value) != value:
                other = self.applied[entry.index]
                raise InvariantViolation(
                    f"State Machine Safety: index {entry.index} applied as {other[:1]} and, "
                    f"by node {node_id}, as {value[:1]}"
                )
            self._record_committed(entry.index, entry.term, entry.data, node_id)
        self.applied_seen[node_id] = entry.index

    def _check_snapshot(self, index: int, term: int, node_id: int) -> None:
        for table, name in ((self.applied, "applied"), (self.committed, "committed")):
            known = table.get(index)
            if known is not None and known[0] != term:
                raise InvariantViolation(
                    f"State Machine Safety: node {node_id} restored a snapshot at {index} of term "
                    f"{term}; {name} there: term {known[0]}"
                )

    def _log_matching(self, node_id: int, log: RaftLog) -> None:
        base, entries = log.snapshot.index, log.entries
        shadow = self.shadow.get(node_id)
        if shadow is not None and shadow[0] == base and shadow[1] == entries:
            return
        fresh = entries
        if shadow is not None:
            start = max(base, shadow[0])
            now, before = entries[start - base :], shadow[1][start - shadow[0] :]
            same = 0
            for a, b in zip(now, before, strict=False):
                if a != b:
                    break
                same += 1
            fresh = now[same:]
        for entry in fresh:
            previous_term = log.term(entry.index - 1)
            record = (entry.data, previous_term)
            known = self.seen.setdefault((entry.index, entry.term), record)
            if known != record:
                raise InvariantViolation(
                    f"Log Matching: node {node_id} holds ({entry.index}, term {entry.term}) after "
                    f"term {previous_term}, elsewhere after term {known[1]} or with other data"
                )
        self.shadow[node_id] = (base, list(entries))

    def _commits(self, node_id: int, log: RaftLog) -> None:
        before = self.commit_seen.get(node_id, log.snapshot.index)
        if log.committed < before:
            raise InvariantViolation(f"node {node_id}'s commit went back from {before}")
        if log.committed > before:
            first = log.first_index
            for entry in log.entries[max(before + 1, first) - first : log.committed + 1 - first]:
                self._record_committed(entry.index, entry.term, entry.data, node_id)
            if before < log.snapshot.index:
                self._check_snapshot(log.snapshot.index, log.snapshot.term, node_id)
        self.commit_seen[node_id] = log.committed

    def _record_committed(self, index: int, term: int, data: bytes, node_id: int) -> None:
        known = self.committed.setdefault(index, (term, data))
        if known != (term, data):
            raise InvariantViolation(
                f"State Machine Safety: index {index} committed with term {known[0]}, and by "
                f"node {node_id} with term {term}"
            )
        self.max_committed = max(self.max_committed, index)

    def _leader(self, node_id: int, term: int, log: RaftLog) -> None:
        mark = self.leader_mark.get(node_id)
        if mark is None or mark[0] != term:
            holder = self.leader_of_term.setdefault(term, node_id)
            if holder != node_id:
                raise InvariantViolation(
                    f"Election Safety: nodes {holder} and {node_id} both leaders of term {term}"
                )
            self._leader_completeness(node_id, term, log)
        elif log.last_index < mark[1] or log.term(mark[1]) not in (mark[2], None):
            raise InvariantViolation(
                f"Leader Append-Only: leader {node_id} of term {term} had ({mark[1]}, term "
                f"{mark[2]}), now last index {log.last_index}"
            )
        self.leader_mark[node_id] = (term, log.last_index, log.last_term)

    def _leader_completeness(self, node_id: int, term: int, log: RaftLog) -> None:
        for index in range(log.first_index, self.max_committed + 1):
            known = self.committed.get(index)
            entry = log.entries[index - log.first_index] if index <= log.last_index else None
            if known is not None and (entry is None or (entry.term, entry.data) != known):
                raise InvariantViolation(
                    f"Leader Completeness: node {node_id} leads term {term} without the entry "
                    f"committed at {index} (term {known[0]})"
                )
        self._check_snapshot(log.snapshot.index, log.snapshot.term, node_id)

    @property
    def leader_terms(self) -> int:
        return len(self.leader_of_term)
