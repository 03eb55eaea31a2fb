"""ExpressionMessageFilter: the broker's filter for a pull (RocketMQ's ExpressionMessageFilter).

For a TAG subscription the broker compares the consume-queue unit's tags code (the Java
hashCode of TAGS, stored as a long, compared as int32) with the subscription's code set;
``*`` passes everything. It never reads a record for that: records whose tag only shares a
hash code are dropped by the client's exact-tag check (see
``rocketq.remoting.protocol.subscription``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rocketq.remoting.protocol.subscription import SubscriptionData


def to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


@dataclass(frozen=True, slots=True)
class ExpressionMessageFilter:
    """The filter of a TAG subscription (``property_filter`` has the SQL92 one)."""

    subscription: SubscriptionData | None

    @property
    def matches_all(self) -> bool:
        return self.subscription is None or self.subscription.matches_all

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        if self.matches_all or tags_code is None:
            return True
        assert self.subscription is not None
        return to_int32(tags_code) in self.subscription.code_set

    def is_matched_by_commit_log(self, record: bytes) -> bool:
        """A TAG filter decided on the tags code already."""
        return True

    def is_matched_by_properties(self, properties: Mapping[str, str]) -> bool:
        """An arriving message's properties (long polling); a TAG filter does not look."""
        return True
