"""RocketMQ's SQL92 selector language: parsing, its error messages and evaluation."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common.filter import compile_sql92, parse_sql92
from rocketq.errors import FilterExpressionError

PROPS = {"a": "5", "b": "abc", "price": "12.5", "flag": "true", "TAGS": "TagA", "neg": "-3"}


def matches(selector: str, props: dict[str, str] | None = None) -> bool:
    return parse_sql92(selector).matches(PROPS if props is None else props)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("a = 5", True),
        ("a = 6", False),
        ("a <> 6", True),
        ("a <> 5", False),
        ("a > 4", True),
        ("a > 5", False),
        ("a >= 5", True),
        ("a < 5", False),
        ("a <= 5", True),
        ("price > 12.0", True),
        ("price > 12", False),  # RocketMQ reads "12.5" as a long for 12: no match
        ("price < 12.6", True),
        ("price >= 12.5 AND price <= 12.5", True),
        ("a = 5.0", True),
        ("neg < 0", True),
        ("neg = -3", True),
        ("b = 'abc'", True),
        ("b = 'ABC'", False),
        ("b <> 'abc'", False),
        ("TAGS = 'TagA'", True),
        ("flag = TRUE", True),
        ("flag = FALSE", False),
        ("a BETWEEN 1 AND 5", True),
        ("a BETWEEN 6 AND 9", False),
        ("a NOT BETWEEN 6 AND 9", True),
        ("a NOT BETWEEN 1 AND 9", False),
        ("b IN ('x', 'abc')", True),
        ("b IN ('x', 'y')", False),
        ("b NOT IN ('x', 'y')", True),
        ("b NOT IN ('abc')", False),
        ("a IS NOT NULL", True),
        ("a IS NULL", False),
        ("missing IS NULL", True),
        ("missing IS NOT NULL", False),
        ("a = 5 AND b = 'abc'", True),
        ("a = 5 AND b = 'x'", False),
        ("a = 6 OR b = 'abc'", True),
        ("a = 6 OR b = 'x'", False),
        ("NOT (a = 6)", True),
        ("NOT (a = 5)", False),
        ("(a = 6 OR a = 5) AND (b = 'abc')", True),
        ("a = 6 OR a = 5 AND b = 'x'", False),  # AND binds tighter than OR
        ("b CONTAINS 'bc'", True),
        ("b NOT CONTAINS 'bc'", False),
        ("b STARTSWITH 'ab'", True),
        ("b ENDSWITH 'ab'", False),
        ("TRUE", True),
        ("FALSE", False),
        ("a > 4 -- a comment\n AND /* another */ b = 'abc'", True),
        ("A = 5", False),  # property names are case-sensitive, keywords are not
        ("a = 5 and b = 'abc' Or a Is Null", True),
    ],
)
def test_each_operator_evaluates_as_rocketmq_does(selector: str, expected: bool) -> None:
    assert matches(selector) is expected


@pytest.mark.parametrize(
    "selector",
    [
        "missing = 1",
        "missing <> 1",
        "missing > 1",
        "missing BETWEEN 1 AND 2",
        "missing NOT BETWEEN 1 AND 2",
        "missing IN ('a')",
        "missing NOT IN ('a')",
        "NOT (missing = 1)",
        "missing = 1 OR missing = 2",
        "missing CONTAINS 'a'",
        "missing",
    ],
)
def test_an_absent_property_is_unknown_and_never_matches(selector: str) -> None:
    assert not matches(selector)


def test_unknown_follows_three_valued_logic() -> None:
    assert matches("missing = 1 OR a = 5")
    assert not matches("missing = 1 AND a = 5")
    assert matches("NOT (missing = 1 AND a = 6)")
    assert not matches("NOT (missing = 1 AND a = 5)")


def test_a_value_that_does_not_convert_fails_the_whole_selector() -> None:
    assert not matches("b > 1")
    assert not matches("b = 1 OR a = 5")  # RocketMQ: the exception ends the evaluation
    assert not matches("price = 12")  # "12.5" is not a long
    assert matches("price = 12.5")


def test_two_string_properties_compare_as_numbers() -> None:
    assert matches("a < price")
    assert not matches("a > b")


def test_a_string_literal_keeps_doubled_quotes() -> None:
    assert matches("q = 'it''s'", {"q": "it's"})


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("a >", "Encountered <EOF> at line 1, column 4"),
        ("a = 5 b", 'Encountered "b" at line 1, column 7'),
        ("a ! 5", "Lexical error at line 1, column 3"),
        ("b = 'open", "Lexical error at line 1, column 5"),
        ("a = NULL", "'NULL' cannot be compared"),
        ("a > 'x'", "Value ''x'' cannot be compared"),
        ("a > TRUE", "Value 'TRUE' cannot be compared"),
        ("TRUE = 1", "'TRUE' cannot be compared with '1'"),
        ("a BETWEEN 5 AND 1", "left value(5) must less than or equal to right value(1)"),
        ("a IN (1, 2)", 'Encountered "1" at line 1, column 7. Was expecting a string literal'),
        ("'x' IN ('x')", "Expected a property for In expression"),
        ("5", "Expression will not result in a boolean value: 5"),
        ("a = 99999999999999999999", "Number out of range"),
        ("(a = 1", 'Encountered <EOF> at line 1, column 7. Was expecting ")"'),
        ("a IS 5", "Was expecting NULL or NOT NULL"),
        ("", "Encountered <EOF> at line 1, column 1"),
        ("a = 1\n  AND", "at line 2, column 6"),
    ],
)
def test_a_bad_selector_raises_an_error_that_says_what_and_where(
    selector: str, message: str
) -> None:
    with pytest.raises(FilterExpressionError) as info:
        compile_sql92(selector)
    assert str(info.value).startswith("Invalid MessageSelector. ")
    assert message in str(info.value)


def test_compiled_selectors_and_errors_are_cached() -> None:
    assert compile_sql92("a = 1") is compile_sql92("a = 1")
    for _ in range(2):
        with pytest.raises(FilterExpressionError, match="Encountered"):
            compile_sql92("a = = 1")


@given(st.integers(min_value=-(10**12), max_value=10**12), st.integers(-100, 100))
def test_numeric_comparisons_agree_with_python(value: int, bound: int) -> None:
    props = {"v": str(value)}
    assert matches(f"v > {bound}", props) is (value > bound)
    assert matches(f"v BETWEEN {min(bound, 0)} AND {max(bound, 0)}", props) is (
        min(bound, 0) <= value <= max(bound, 0)
    )
    assert matches(f"v = {value}", props)


WORDS = [
    "a", "b", "TAGS", "NOT", "AND", "OR", "BETWEEN", "IN", "IS", "NULL", "TRUE", "FALSE",
    "CONTAINS", "=", "<>", ">", ">=", "<", "<=", "(", ")", ",", "+", "-", "1", "2.5", "'x'",
    "'1'", "0", "--c\n", "/*c*/",
]  # fmt: skip


@given(st.lists(st.sampled_from(WORDS), max_size=12), st.dictionaries(
    st.sampled_from(["a", "b", "TAGS"]), st.sampled_from(["1", "x", "2.5", "true", ""])
))  # fmt: skip
def test_any_token_sequence_parses_or_fails_with_a_filter_error(
    words: list[str], props: dict[str, str]
) -> None:
    try:
        selector = parse_sql92(" ".join(words))
    except FilterExpressionError as exc:
        message = str(exc)
    else:
        assert selector.matches(props) in (True, False)
        return
    assert message.startswith("Invalid MessageSelector. ")


@given(st.text(max_size=40))
def test_arbitrary_text_never_raises_anything_but_a_filter_error(text: str) -> None:
    with contextlib.suppress(FilterExpressionError):
        parse_sql92(text)
