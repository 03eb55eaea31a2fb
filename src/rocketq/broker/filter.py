"""Tag subscriptions (FilterAPI) and the broker's message filter (ExpressionMessageFilter).

The consume-queue check compares the entry's tags code (the Java hashCode of TAGS, as int32)
with the subscription's code set; ``*`` passes everything. Because hash codes collide, the
broker also checks the TAGS string of each matched record against the subscription's tag set
before returning it (``is_matched_by_tags``), so clients never see a foreign tag.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.common.subscription import SUB_ALL, SubscriptionData


def to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


@dataclass(frozen=True, slots=True)
class ExpressionMessageFilter:
    subscription: SubscriptionData | None

    @property
    def matches_all(self) -> bool:
        s = self.subscription
        return s is None or s.class_filter_mode or s.sub_string == SUB_ALL

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        if self.matches_all or tags_code is None:
            return True
        assert self.subscription is not None
        return to_int32(tags_code) in self.subscription.code_set

    def is_matched_by_commit_log(self, record: bytes) -> bool:
        return True

    def is_matched_by_tags(self, tags: str | None) -> bool:
        if self.matches_all:
            return True
        assert self.subscription is not None
        return bool(tags) and tags in self.subscription.tags_set
