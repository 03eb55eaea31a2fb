"""SubscriptionData and how it is built and matched (RocketMQ's ``heartbeat/SubscriptionData``
and ``filter/FilterAPI``, both in ``remoting/protocol``).

A TAG expression ``"*"`` (or empty) subscribes to everything; otherwise it splits on ``||``
into trimmed, non-empty tags whose Java hashes form ``codeSet``; an expression with no tag
left (``"||"``) does not parse. The client builds it to subscribe and the broker rebuilds it
from ``subString`` for each pull, with this one function, so both read ``||`` alike.

Where each filter runs (as in RocketMQ): the broker compares the consume-queue unit's tags
code with ``codeSet`` (no record is read for a queue entry that does not match); the client
compares the exact TAGS string with ``tagsSet`` (``is_tag_matched``), which drops the
records that only shared a hash code. Property (SQL92) filters run on the broker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.common.hashing import java_string_hash
from rocketq.errors import FilterExpressionError
from rocketq.remoting.protocol.json_body import JsonBody, json_field

SUB_ALL = "*"
TAG_SEPARATOR = "||"
EXPRESSION_TYPE_TAG = "TAG"
EXPRESSION_TYPE_SQL92 = "SQL92"


def _expression_type(value: object) -> str:
    return str(value) if value else EXPRESSION_TYPE_TAG


@dataclass(slots=True, kw_only=True)
class SubscriptionData(JsonBody):
    topic: str
    sub_string: str = SUB_ALL
    tags_set: list[str] = field(default_factory=list)
    code_set: list[int] = field(default_factory=list)
    sub_version: int = 0
    # an empty type reads as TAG, as ExpressionType.isTagType has it
    expression_type: str = field(
        default=EXPRESSION_TYPE_TAG, metadata=json_field(read=_expression_type)
    )
    class_filter_mode: bool = False

    @property
    def matches_all(self) -> bool:
        return self.class_filter_mode or self.sub_string == SUB_ALL


def parse_tags(expression: str | None) -> list[str]:
    """The tags of a TAG expression; [] means all."""
    text = (expression or "").strip()
    if not text or text == SUB_ALL:
        return []
    return [t for t in (part.strip() for part in text.split(TAG_SEPARATOR)) if t]


def is_tag_type(expression_type: str | None) -> bool:
    """ExpressionType.isTagType: no type or TAG."""
    return not expression_type or expression_type == EXPRESSION_TYPE_TAG


def build_subscription_data(
    topic: str, expression: str | None, sub_version: int = 0, expression_type: str | None = None
) -> SubscriptionData:
    """FilterAPI.build: a TAG expression's tags and their codes (no type, or TAG), or another
    type's expression as it is (the broker compiles an SQL92 one; the client did already)."""
    if not topic:
        raise FilterExpressionError("the subscribed topic is empty")
    if not is_tag_type(expression_type):
        assert expression_type is not None
        return SubscriptionData(
            topic=topic,
            sub_string=expression or "",
            sub_version=sub_version,
            expression_type=expression_type,
        )
    text = (expression or "").strip()
    tags = parse_tags(text)
    if not tags:
        if text and text != SUB_ALL:
            raise FilterExpressionError(f"the tag expression {expression!r} has no tag")
        return SubscriptionData(topic=topic, sub_string=SUB_ALL, sub_version=sub_version)
    return SubscriptionData(
        topic=topic,
        sub_string=text,
        tags_set=tags,
        code_set=[java_string_hash(t) for t in tags],
        sub_version=sub_version,
        expression_type=EXPRESSION_TYPE_TAG,
    )


def is_tag_matched(subscription: SubscriptionData, tags: str | None) -> bool:
    """The exact-tag check (PullAPIWrapper.processPullResult)."""
    if subscription.matches_all or not subscription.tags_set:
        return True
    return bool(tags) and tags in subscription.tags_set
