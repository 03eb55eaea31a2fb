"""One SubscriptionData builder (FilterAPI.build) serves the client and the broker."""

from __future__ import annotations

import pytest

from rocketq.client.message_selector import MessageSelector, build_subscription
from rocketq.errors import FilterExpressionError
from rocketq.remoting.protocol.subscription import (
    EXPRESSION_TYPE_SQL92,
    build_subscription_data,
    is_tag_type,
)


def test_the_client_and_the_broker_build_the_same_tag_subscription() -> None:
    on_client = build_subscription("T", " TagA || TagB ", 5)
    on_broker = build_subscription_data("T", on_client.sub_string, 5, "TAG")
    assert on_broker == on_client
    assert on_broker.tags_set == ["TagA", "TagB"]


def test_the_client_and_the_broker_build_the_same_sql92_subscription() -> None:
    on_client = build_subscription("T", MessageSelector.by_sql("a > 1"), 5)
    on_broker = build_subscription_data("T", on_client.sub_string, 5, EXPRESSION_TYPE_SQL92)
    assert on_broker == on_client
    assert on_broker.expression_type == EXPRESSION_TYPE_SQL92
    assert on_broker.code_set == []


@pytest.mark.parametrize("expression_type", [None, "", "TAG"])
def test_no_type_and_tag_are_tag_types(expression_type: str | None) -> None:
    assert is_tag_type(expression_type)


@pytest.mark.parametrize("expression_type", [None, EXPRESSION_TYPE_SQL92])
def test_an_empty_topic_is_refused_whatever_the_type(expression_type: str | None) -> None:
    with pytest.raises(FilterExpressionError, match="topic is empty"):
        build_subscription_data("", "*", 0, expression_type)
