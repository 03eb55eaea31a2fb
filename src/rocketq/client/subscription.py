"""Subscriptions -> SubscriptionData (FilterAPI.build), and the client filter.

A subscription is a TAG expression (a string, or ``MessageSelector.by_tag``) or an SQL92
selector (``MessageSelector.by_sql``), as in RocketMQ's ``subscribe(topic, MessageSelector)``.
An SQL92 selector is compiled here with the broker's parser (``rocketq.common.filter``), so a
bad one fails at ``subscribe``; the broker evaluates it on pull and the client keeps
everything it is sent.

``"*"`` or an empty expression subscribes to everything; otherwise the expression splits on
``||`` into trimmed tags whose Java hashes form ``codeSet``. The broker filters by hash, so the
client drops messages whose TAGS string is not in ``tagsSet`` (hash collisions, remoting.md §6.3).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rocketq.common.filter import compile_sql92
from rocketq.common.hashing import java_string_hash
from rocketq.common.message import Message
from rocketq.errors import ClientError
from rocketq.remoting.bodies import (
    EXPRESSION_TYPE_SQL92,
    EXPRESSION_TYPE_TAG,
    SUB_ALL,
    SubscriptionData,
)


@dataclass(frozen=True, slots=True)
class MessageSelector:
    """RocketMQ's MessageSelector: an expression and its type (TAG or SQL92)."""

    expression_type: str
    expression: str

    @classmethod
    def by_sql(cls, sql: str) -> MessageSelector:
        """Messages whose properties match ``sql`` (the broker needs enablePropertyFilter)."""
        compile_sql92(sql)  # FilterExpressionError: what is wrong and where
        return cls(EXPRESSION_TYPE_SQL92, sql)

    @classmethod
    def by_tag(cls, tag: str) -> MessageSelector:
        """``"TagA || TagB"``; ``"*"`` or empty for every message."""
        return cls(EXPRESSION_TYPE_TAG, tag)


Subscription = str | MessageSelector


def parse_tags(expression: str | None) -> list[str]:
    """The tags of a TAG expression; [] means all."""
    if expression is None or not expression.strip() or expression.strip() == SUB_ALL:
        return []
    tags = [t.strip() for t in expression.split("||")]
    return [t for t in tags if t]


def build_subscription_data(topic: str, expression: Subscription | None) -> SubscriptionData:
    if not topic:
        raise ClientError("the subscribed topic is empty")
    if isinstance(expression, MessageSelector):
        if expression.expression_type == EXPRESSION_TYPE_SQL92:
            return SubscriptionData(
                topic=topic,
                sub_string=MessageSelector.by_sql(expression.expression).expression,
                sub_version=time.time_ns() // 1_000_000,
                expression_type=EXPRESSION_TYPE_SQL92,
            )
        expression = expression.expression
    tags = parse_tags(expression)
    if expression and expression.strip() not in ("", SUB_ALL) and not tags:
        raise ClientError(f"the tag expression {expression!r} has no tag")
    return SubscriptionData(
        topic=topic,
        sub_string=expression.strip() if tags and expression else SUB_ALL,
        tags_set=tags,
        code_set=[java_string_hash(t) for t in tags],
        sub_version=time.time_ns() // 1_000_000,
        expression_type=EXPRESSION_TYPE_TAG,
    )


def matches(subscription: SubscriptionData, msg: Message) -> bool:
    """PullAPIWrapper.processPullResult's tag check."""
    if not subscription.tags_set or subscription.class_filter_mode:
        return True
    return msg.tags is not None and msg.tags in subscription.tags_set
