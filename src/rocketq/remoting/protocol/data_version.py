"""DataVersion: a counter bumped on every change of a table, and when (RocketMQ's DataVersion).

The broker keeps one for its topic table (sent with every registration, persisted in
``topics.json``) and one for its subscription groups; the name server compares them to tell
whether a registration changed anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.common.clock import now_ms
from rocketq.remoting.protocol.json_body import JsonBody


@dataclass(slots=True, kw_only=True)
class DataVersion(JsonBody):
    # stamped at creation, as RocketMQ's (System.currentTimeMillis()): a table that a restarted
    # broker builds afresh never equals the version it registered before the restart; a body
    # without the key reads as 0 (fastjson leaves the long at its zero)
    timestamp: int = field(default_factory=now_ms)
    counter: int = 0
    # RocketMQ 5: a controller-mode master stamps its master epoch here; the name server keeps
    # the id-0 broker with the higher one. Left out of the JSON until set (4.x has no key).
    state_version: int | None = None

    def next_version(
        self, timestamp_ms: int | None = None, state_version: int | None = None
    ) -> None:
        """After a change: counter + 1, timestamp = now (or ``timestamp_ms``); with
        ``state_version``, that too (``nextVersion(stateVersion)``)."""
        self.counter += 1
        self.timestamp = now_ms() if timestamp_ms is None else timestamp_ms
        if state_version is not None:
            self.state_version = state_version

    @property
    def state_version_or_zero(self) -> int:
        return self.state_version or 0
