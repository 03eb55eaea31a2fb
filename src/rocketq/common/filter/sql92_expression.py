"""The expression tree of an SQL92 selector and its evaluation over message properties.

Theory of operation (RocketMQ's filter/expression, after ActiveMQ's selectors):

- A value is ``None`` (unknown: the property is absent), ``bool``, ``int`` (Java long),
  ``float`` (Java double) or ``str``. Properties are strings; a comparison converts the
  string side to the other side's type (``a > 5`` reads ``a`` as a long, ``a = TRUE`` as a
  boolean), and ``>``/``>=``/``<``/``<=`` between two strings compare them as doubles.
- Logic is three-valued: a comparison with an unknown side is unknown, ``NOT`` unknown is
  unknown, ``AND``/``OR`` follow Kleene. A message matches only when the selector is TRUE.
- A conversion that fails (``a > 5`` with ``a = "x"``) raises :class:`SelectorEvaluationError`;
  the whole selector then does not match the message, as RocketMQ's filter treats an
  exception. ``IS NULL`` is the only test that is TRUE for an absent property.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

Value = bool | int | float | str | None

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
_JAVA_LONG = re.compile(r"[+-]?[0-9]+")
_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")


class SelectorEvaluationError(ValueError):
    """A value could not be converted for a comparison; the message does not match."""


def java_long(text: str) -> int:
    if _JAVA_LONG.fullmatch(text) is None or not LONG_MIN <= int(text) <= LONG_MAX:
        raise SelectorEvaluationError(f'For input string: "{text}"')
    return int(text)


def java_double(text: str) -> float:
    stripped = text.strip(" \t\n\r\f\v\x00")
    if stripped[-1:] in ("f", "F", "d", "D"):
        stripped = stripped[:-1]
    if _JAVA_DOUBLE.fullmatch(stripped) is None:
        raise SelectorEvaluationError(f'For input string: "{text}"')
    return float(stripped)


def _convert(lv: Value, rv: Value) -> tuple[Value, Value] | None:
    """Both sides in one type (ComparisonExpression.__compare), or None: not comparable."""
    lt, rt = type(lv), type(rv)
    if lt is rt:
        return lv, rv
    if lt is bool:
        if rt is str:
            raise SelectorEvaluationError(f"cannot compare {lv!r} with {rv!r}")
        return None
    if lt is str:
        assert isinstance(lv, str)
        if rt is bool:
            return lv.lower() == "true", rv
        return (java_long(lv) if rt is int else java_double(lv)), rv
    if rt is bool:
        return None
    if rt is str:
        assert isinstance(rv, str)
        return lv, (java_long(rv) if lt is int else java_double(rv))
    return lv, rv  # int and float


def compare(lv: Value, rv: Value) -> int:
    """-1, 0 or 1; sides that cannot be compared answer -1, as RocketMQ's __compare does."""
    pair = _convert(lv, rv)
    if pair is None:
        return -1
    a, b = pair
    assert a is not None
    assert b is not None
    return (a > b) - (a < b)  # type: ignore[operator]


class Expression:
    """A node of the tree; ``evaluate`` may raise SelectorEvaluationError."""

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        raise NotImplementedError


class BooleanExpression(Expression):
    def matches(self, properties: Mapping[str, str]) -> bool:
        """TRUE for these properties; an evaluation error is no match."""
        try:
            return self.evaluate(properties) is True
        except SelectorEvaluationError:
            return False


@dataclass(frozen=True, slots=True)
class Constant(Expression):
    value: Value

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        return self.value

    def __str__(self) -> str:
        if self.value is None:
            return "NULL"
        if isinstance(self.value, bool):
            return "TRUE" if self.value else "FALSE"
        if isinstance(self.value, str):
            return "'" + self.value.replace("'", "''") + "'"
        return str(self.value)


@dataclass(frozen=True, slots=True)
class BooleanConstant(Constant, BooleanExpression):
    """TRUE, FALSE and NULL: constants that are also selectors."""


@dataclass(frozen=True, slots=True)
class Property(Expression):
    name: str

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        return properties.get(self.name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Negate(Expression):
    operand: Expression

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        value = self.operand.evaluate(properties)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
        return None

    def __str__(self) -> str:
        return f"(- {self.operand})"


@dataclass(frozen=True, slots=True)
class Comparison(BooleanExpression):
    """``>``, ``>=``, ``<``, ``<=``; two strings compare as doubles."""

    symbol: str
    left: Expression
    right: Expression

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        lv = self.left.evaluate(properties)
        if lv is None:
            return None
        rv = self.right.evaluate(properties)
        if rv is None:
            return None
        if isinstance(lv, str) and isinstance(rv, str):
            lv, rv = java_double(lv), java_double(rv)
        answer = compare(lv, rv)
        if self.symbol == ">":
            return answer > 0
        if self.symbol == ">=":
            return answer >= 0
        if self.symbol == "<":
            return answer < 0
        return answer <= 0

    def __str__(self) -> str:
        return f"({self.left} {self.symbol} {self.right})"


@dataclass(frozen=True, slots=True)
class Equal(BooleanExpression):
    """``=`` (and, with a NULL right side, ``IS NULL``)."""

    left: Expression
    right: Expression

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        lv = self.left.evaluate(properties)
        rv = self.right.evaluate(properties)
        if (lv is None) != (rv is None):
            return None if lv is None else False
        if lv is None or (type(lv) is type(rv) and lv == rv):
            return True
        return compare(lv, rv) == 0

    def __str__(self) -> str:
        return f"({self.left} == {self.right})"


@dataclass(frozen=True, slots=True)
class And(BooleanExpression):
    left: BooleanExpression
    right: BooleanExpression

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        lv = self.left.evaluate(properties)
        if lv is False:
            return False
        rv = self.right.evaluate(properties)
        if rv is False:
            return False
        return None if lv is None or rv is None else True

    def __str__(self) -> str:
        return f"({self.left} && {self.right})"


@dataclass(frozen=True, slots=True)
class Or(BooleanExpression):
    left: BooleanExpression
    right: BooleanExpression

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        lv = self.left.evaluate(properties)
        if lv is True:
            return True
        rv = self.right.evaluate(properties)
        if rv is True:
            return True
        return None if lv is None or rv is None else False

    def __str__(self) -> str:
        return f"({self.left} || {self.right})"


@dataclass(frozen=True, slots=True)
class Not(BooleanExpression):
    operand: BooleanExpression

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        value = self.operand.evaluate(properties)
        return None if value is None else not value

    def __str__(self) -> str:
        return f"(NOT {self.operand})"


@dataclass(frozen=True, slots=True)
class BooleanCast(BooleanExpression):
    """A bare property used as a condition: TRUE only for a boolean value."""

    operand: Expression

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        value = self.operand.evaluate(properties)
        if value is None:
            return None
        return value is True

    def __str__(self) -> str:
        return str(self.operand)


@dataclass(frozen=True, slots=True)
class In(BooleanExpression):
    """``p IN ('a', 'b')`` / ``NOT IN``: an absent or non-string value is unknown."""

    operand: Property
    values: frozenset[str]
    negated: bool = False

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        value = self.operand.evaluate(properties)
        if not isinstance(value, str):
            return None
        return (value in self.values) != self.negated

    def __str__(self) -> str:
        items = ", ".join(str(Constant(v)) for v in sorted(self.values))
        return f"{self.operand} {'NOT IN' if self.negated else 'IN'} ( {items} )"


@dataclass(frozen=True, slots=True)
class StringTest(BooleanExpression):
    """``CONTAINS``, ``STARTSWITH``, ``ENDSWITH`` (RocketMQ 5) and their NOT forms."""

    operator: str
    operand: Expression
    text: str
    negated: bool = False

    def evaluate(self, properties: Mapping[str, str]) -> Value:
        value = self.operand.evaluate(properties)
        if not isinstance(value, str):
            return None
        if self.operator == "CONTAINS":
            found = self.text in value
        elif self.operator == "STARTSWITH":
            found = value.startswith(self.text)
        else:
            found = value.endswith(self.text)
        return found != self.negated

    def __str__(self) -> str:
        op = f"NOT {self.operator}" if self.negated else self.operator
        return f"({self.operand} {op} {Constant(self.text)})"
