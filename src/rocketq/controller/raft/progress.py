"""What a leader knows of each follower (etcd-io/raft's ``tracker.Progress``, reduced).

No pipelining: the controller's log is small and rarely written, so a leader keeps at most one
AppendEntries (or snapshot) in flight per follower (``paused``) and a heartbeat response
resumes it, which also retries a lost message. ``recent_active`` feeds CheckQuorum.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Progress:
    match: int = 0
    next: int = 1
    paused: bool = False
    recent_active: bool = False

    def update(self, index: int) -> bool:
        """A follower acknowledged everything up to ``index``; True when ``match`` advanced."""
        advanced = index > self.match
        if advanced:
            self.match = index
        self.next = max(self.next, index + 1)
        self.paused = False
        return advanced

    def decrease_to(self, rejected: int, last_index_hint: int) -> bool:
        """A follower rejected the probe at ``rejected``; back off (at most to just after its
        last index). Returns False for a stale rejection."""
        if rejected != self.next - 1 or rejected <= self.match:
            return False
        self.next = max(min(rejected, last_index_hint + 1), self.match + 1)
        self.paused = False
        return True


def quorum_index(matches: list[int], quorum: int) -> int:
    """The highest index that ``quorum`` of the matches have reached."""
    return sorted(matches, reverse=True)[quorum - 1]
