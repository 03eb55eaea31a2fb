"""MessageSelector: what ``subscribe`` takes, as in RocketMQ's ``subscribe(topic, selector)``.

A subscription is a TAG expression (a string, or ``MessageSelector.by_tag``) or an SQL92
selector (``MessageSelector.by_sql``). An SQL92 selector is compiled here with the broker's
language (``rocketq.common.filter``), so a bad one fails at ``subscribe``; the broker
evaluates it on pull (it needs ``enablePropertyFilter=true``) and the client keeps every
record it is sent (no tags set to check).
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketq.common.filter import compile_sql92
from rocketq.errors import ClientError
from rocketq.remoting.protocol.subscription import (
    EXPRESSION_TYPE_SQL92,
    EXPRESSION_TYPE_TAG,
    SubscriptionData,
    build_subscription_data,
)


@dataclass(frozen=True, slots=True)
class MessageSelector:
    """RocketMQ's MessageSelector: an expression and its type (TAG or SQL92)."""

    expression_type: str
    expression: str

    @classmethod
    def by_sql(cls, sql: str) -> MessageSelector:
        """Messages whose properties match ``sql``; FilterExpressionError says what is wrong."""
        compile_sql92(sql)
        return cls(EXPRESSION_TYPE_SQL92, sql)

    @classmethod
    def by_tag(cls, tag: str) -> MessageSelector:
        """``"TagA || TagB"``; ``"*"`` or empty for every message."""
        return cls(EXPRESSION_TYPE_TAG, tag)


Subscription = str | MessageSelector


def build_subscription(
    topic: str, subscription: Subscription | None, sub_version: int
) -> SubscriptionData:
    """FilterAPI.build on the client: a TAG expression or an SQL92 selector."""
    if not isinstance(subscription, MessageSelector):
        return build_subscription_data(topic, subscription, sub_version)
    if subscription.expression_type == EXPRESSION_TYPE_TAG:
        return build_subscription_data(topic, subscription.expression, sub_version)
    if subscription.expression_type != EXPRESSION_TYPE_SQL92:
        raise ClientError(f"unsupported expression type {subscription.expression_type!r}")
    sql = MessageSelector.by_sql(subscription.expression).expression
    return build_subscription_data(topic, sql, sub_version, EXPRESSION_TYPE_SQL92)
