"""Tag subscriptions (FilterAPI) and the broker's message filter (ExpressionMessageFilter).

The consume-queue check compares the entry's tags code (the Java hashCode of TAGS, as int32)
with the subscription's code set; ``*`` passes everything. Because hash codes collide, the
broker also checks the TAGS string of each matched record against the subscription's tag set
before returning it (``is_matched_by_tags``), so clients never see a foreign tag.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rocketq.remoting.bodies import EXPRESSION_TYPE_TAG, SUB_ALL, SubscriptionData

TAG_SEPARATOR = "||"


def build_subscription_data(
    topic: str, expression: str | None, sub_version: int = 0
) -> SubscriptionData:
    """FilterAPI.buildSubscriptionData for TAG expressions."""
    text = (expression or "").strip()
    if not text or text == SUB_ALL:
        return SubscriptionData(topic=topic, sub_string=SUB_ALL, sub_version=sub_version)
    from rocketq.common.hashing import java_string_hash

    tags = [t.strip() for t in text.split(TAG_SEPARATOR) if t.strip()]
    return SubscriptionData(
        topic=topic,
        sub_string=text,
        tags_set=tags,
        code_set=[java_string_hash(t) for t in tags],
        sub_version=sub_version,
        expression_type=EXPRESSION_TYPE_TAG,
    )


def to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


@dataclass(frozen=True, slots=True)
class ExpressionMessageFilter:
    """The filter of a TAG subscription (``property_filter`` has the SQL92 one)."""

    subscription: SubscriptionData | None

    @property
    def matches_all(self) -> bool:
        s = self.subscription
        return s is None or s.class_filter_mode or s.sub_string == SUB_ALL

    @property
    def checks_tags(self) -> bool:
        """Whether records found must pass ``is_matched_by_tags`` (TAG subscriptions)."""
        return not self.matches_all

    def is_matched_by_consume_queue(
        self, tags_code: int | None, cq_ext_unit: object = None
    ) -> bool:
        if self.matches_all or tags_code is None:
            return True
        assert self.subscription is not None
        return to_int32(tags_code) in self.subscription.code_set

    def is_matched_by_commit_log(
        self, msg_buffer: bytes | None = None, properties: Mapping[str, str] | None = None
    ) -> bool:
        return True

    def is_matched_by_properties(self, properties: Mapping[str, str]) -> bool:
        """An arriving message's properties (long polling); a TAG filter does not look."""
        return True

    def is_matched_by_tags(self, tags: str | None) -> bool:
        if self.matches_all:
            return True
        assert self.subscription is not None
        return bool(tags) and tags in self.subscription.tags_set
