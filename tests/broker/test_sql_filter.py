"""ExpressionMessageFilter for SQL92 subscriptions: units pass, records are evaluated."""

from __future__ import annotations

import pytest

from rocketq.broker.config import BrokerConfig
from rocketq.broker.filter import ExpressionMessageFilter
from rocketq.broker.property_filter import PropertyMessageFilter, message_filter_of
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import encode_message
from rocketq.errors import ConfigError, FilterExpressionError
from rocketq.remoting.protocol.subscription import build_subscription_data


def record(**props: str) -> bytes:
    return bytes(encode_message(MessageExt(topic="T", body=b"x", properties=dict(props))))


def sql(expression: str) -> ExpressionMessageFilter:
    return message_filter_of(build_subscription_data("T", expression, 1, "SQL92"))


def test_sql92_filter_ignores_the_tags_code_and_evaluates_the_record_properties() -> None:
    f = sql("a > 2 AND TAGS = 'x'")
    assert not f.matches_all
    assert f.is_matched_by_consume_queue(12345)
    assert f.is_matched_by_commit_log(record(a="3", TAGS="x"))
    assert not f.is_matched_by_commit_log(record(a="1", TAGS="x"))
    assert not f.is_matched_by_commit_log(record(TAGS="x"))
    assert f.is_matched_by_properties({"a": "9", "TAGS": "x"})
    assert not f.is_matched_by_properties({"a": "9"})


def test_tag_filter_never_reads_the_record() -> None:
    f = message_filter_of(build_subscription_data("T", "TagA", 1, "TAG"))
    assert not isinstance(f, PropertyMessageFilter)
    assert f.is_matched_by_commit_log(b"not a record")
    assert f.is_matched_by_properties({})


def test_sql92_subscription_keeps_its_expression_and_type() -> None:
    sub = build_subscription_data("T", "a IS NULL", 7, "SQL92")
    assert (sub.sub_string, sub.expression_type, sub.sub_version) == ("a IS NULL", "SQL92", 7)
    assert sub.code_set == []


@pytest.mark.parametrize("expression", ["", "a >", "a = = 1"])
def test_bad_sql92_subscription_does_not_compile(expression: str) -> None:
    with pytest.raises(FilterExpressionError):
        sql(expression)


def test_enable_property_filter_loads_from_broker_conf_and_is_off_by_default() -> None:
    assert BrokerConfig().enable_property_filter is False
    assert BrokerConfig.from_properties({"enablePropertyFilter": "true"}).enable_property_filter
    with pytest.raises(ConfigError, match="enablePropertyFilter"):
        BrokerConfig.from_properties({"enablePropertyFilter": "yes"})
