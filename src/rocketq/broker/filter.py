"""Subscriptions (FilterAPI) and the broker's message filter (ExpressionMessageFilter).

TAG subscriptions: the consume-queue check compares the entry's tags code (the Java hashCode
of TAGS, as int32) with the subscription's code set; ``*`` passes everything. Because hash
codes collide, the broker also checks the TAGS string of each matched record against the
subscription's tag set before returning it (``is_matched_by_tags``), so clients never see a
foreign tag.

SQL92 subscriptions: the tags code says nothing (every unit passes the consume-queue check);
the selector, compiled once per expression (``rocketq.common.filter``), is evaluated on each
record's properties in ``is_matched_by_commit_log``. Properties are decoded there and only
for SQL92 subscriptions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from rocketq.common.filter import BooleanExpression, compile_sql92
from rocketq.errors import FilterExpressionError
from rocketq.remoting.bodies import (
    EXPRESSION_TYPE_SQL92,
    EXPRESSION_TYPE_TAG,
    SUB_ALL,
    SubscriptionData,
)

TAG_SEPARATOR = "||"
PROPERTY_FILTER_SETTING = "enablePropertyFilter"


def is_tag_type(expression_type: str | None) -> bool:
    """ExpressionType.isTagType: no type or TAG."""
    return not expression_type or expression_type == EXPRESSION_TYPE_TAG


def property_filter_disabled_remark(expression_type: str) -> str:
    """RocketMQ's refusal, naming the broker.conf setting that enables it."""
    return (
        f"The broker does not support consumer to filter message by {expression_type}"
        f" ({PROPERTY_FILTER_SETTING}=false in broker.conf)"
    )


def build_subscription_data(
    topic: str, expression: str | None, sub_version: int = 0, expression_type: str | None = None
) -> SubscriptionData:
    """FilterAPI.build: a TAG expression's tags and codes, or another type's expression."""
    if not is_tag_type(expression_type):
        assert expression_type is not None
        return SubscriptionData(
            topic=topic,
            sub_string=expression or "",
            sub_version=sub_version,
            expression_type=expression_type,
        )
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


def compile_selector(subscription: SubscriptionData) -> BooleanExpression | None:
    """The compiled selector of a non-TAG subscription (None for TAG); errors raise."""
    if is_tag_type(subscription.expression_type):
        return None
    if subscription.expression_type != EXPRESSION_TYPE_SQL92:
        raise FilterExpressionError(
            f"Unsupported expression type: {subscription.expression_type} "
            f"(this broker filters by {EXPRESSION_TYPE_TAG} and {EXPRESSION_TYPE_SQL92})"
        )
    if not subscription.sub_string.strip():
        raise FilterExpressionError(f"Expression can't be null! {EXPRESSION_TYPE_SQL92}")
    return compile_sql92(subscription.sub_string)


def to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


@dataclass(frozen=True, slots=True)
class ExpressionMessageFilter:
    subscription: SubscriptionData | None
    selector: BooleanExpression | None = None

    @classmethod
    def of(cls, subscription: SubscriptionData) -> Self:
        """The filter of a subscription, its SQL92 selector compiled (FilterExpressionError)."""
        return cls(subscription, compile_selector(subscription))

    @property
    def matches_all(self) -> bool:
        s = self.subscription
        if self.selector is not None:
            return False
        return s is None or s.class_filter_mode or s.sub_string == SUB_ALL

    @property
    def checks_tags(self) -> bool:
        """Whether records found must pass ``is_matched_by_tags`` (TAG subscriptions)."""
        return self.selector is None and not self.matches_all

    def is_matched_by_consume_queue(
        self, tags_code: int | None, cq_ext_unit: object = None
    ) -> bool:
        if self.selector is not None or self.matches_all or tags_code is None:
            return True
        assert self.subscription is not None
        return to_int32(tags_code) in self.subscription.code_set

    def is_matched_by_commit_log(
        self, msg_buffer: bytes | None = None, properties: Mapping[str, str] | None = None
    ) -> bool:
        if self.selector is None:
            return True
        if properties is None:
            if msg_buffer is None:
                return True
            properties = _record_properties(msg_buffer)
        return self.selector.matches(properties)

    def is_matched_by_tags(self, tags: str | None) -> bool:
        if not self.checks_tags:
            return True
        assert self.subscription is not None
        return bool(tags) and tags in self.subscription.tags_set


def _record_properties(record: bytes) -> Mapping[str, str]:
    from rocketq.common.message_decoder import decode_record_properties

    return decode_record_properties(record)
