"""Tag expressions -> SubscriptionData (FilterAPI.buildSubscriptionData), and the client filter.

``"*"`` or an empty expression subscribes to everything; otherwise the expression splits on
``||`` into trimmed tags whose Java hashes form ``codeSet``. The broker filters by hash, so the
client drops messages whose TAGS string is not in ``tagsSet`` (hash collisions, remoting.md §6.3).
"""

from __future__ import annotations

import time

from rocketq.common.hashing import java_string_hash
from rocketq.common.message import Message
from rocketq.errors import ClientError
from rocketq.remoting.bodies import EXPRESSION_TYPE_TAG, SUB_ALL, SubscriptionData


def parse_tags(expression: str | None) -> list[str]:
    """The tags of a TAG expression; [] means all."""
    if expression is None or not expression.strip() or expression.strip() == SUB_ALL:
        return []
    tags = [t.strip() for t in expression.split("||")]
    return [t for t in tags if t]


def build_subscription_data(topic: str, expression: str | None) -> SubscriptionData:
    if not topic:
        raise ClientError("the subscribed topic is empty")
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
