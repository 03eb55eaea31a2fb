"""SQL92 property filters on the broker (RocketMQ's FilterAPI.build, ConsumerFilterManager,
ExpressionMessageFilter for SQL92, and ClientManageProcessor.checkClientConfig's checks).

A subscription whose expression type is not TAG is compiled once per expression with the
language in ``rocketq.common.filter`` (cached there). Its filter ignores the consume queue's
tags code (every unit passes) and evaluates the selector on each record's properties in
``is_matched_by_commit_log``: the properties are read there, and only for SQL92
subscriptions. ``enablePropertyFilter=false`` (RocketMQ's default) refuses such subscriptions
with a remark that names the setting; one that does not compile is refused with
SUBSCRIPTION_PARSE_FAILED and the parser's message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rocketq.broker.filter import ExpressionMessageFilter
from rocketq.common.filter import BooleanExpression, compile_sql92
from rocketq.common.message_decoder import decode_record_properties
from rocketq.errors import FilterExpressionError
from rocketq.remoting.protocol.subscription import (
    EXPRESSION_TYPE_SQL92,
    EXPRESSION_TYPE_TAG,
    SubscriptionData,
    is_tag_type,
)

PROPERTY_FILTER_SETTING = "enablePropertyFilter"


def property_filter_disabled_remark(expression_type: str) -> str:
    """RocketMQ's refusal, naming the broker.conf setting that enables it."""
    return (
        f"The broker does not support consumer to filter message by {expression_type}"
        f" ({PROPERTY_FILTER_SETTING}=false in broker.conf)"
    )


def compile_selector(subscription: SubscriptionData) -> BooleanExpression:
    """The compiled selector of a non-TAG subscription; FilterExpressionError says why not."""
    if subscription.expression_type != EXPRESSION_TYPE_SQL92:
        raise FilterExpressionError(
            f"Unsupported expression type: {subscription.expression_type} "
            f"(this broker filters by {EXPRESSION_TYPE_TAG} and {EXPRESSION_TYPE_SQL92})"
        )
    if not subscription.sub_string.strip():
        raise FilterExpressionError(f"Expression can't be null! {EXPRESSION_TYPE_SQL92}")
    return compile_sql92(subscription.sub_string)


def message_filter_of(subscription: SubscriptionData) -> ExpressionMessageFilter:
    """The pull's filter; a non-TAG selector is compiled (FilterExpressionError)."""
    if is_tag_type(subscription.expression_type):
        return ExpressionMessageFilter(subscription)
    return PropertyMessageFilter(subscription, compile_selector(subscription))


@dataclass(frozen=True, slots=True)
class PropertyMessageFilter(ExpressionMessageFilter):
    """ExpressionMessageFilter for an SQL92 subscription."""

    selector: BooleanExpression

    @property
    def matches_all(self) -> bool:
        return False

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        return True  # the tags code says nothing about properties

    def is_matched_by_commit_log(self, record: bytes) -> bool:
        """Only the record's properties are read (``decode_record_properties``)."""
        return self.selector.matches(decode_record_properties(record))

    def is_matched_by_properties(self, properties: Mapping[str, str]) -> bool:
        return self.selector.matches(properties)
