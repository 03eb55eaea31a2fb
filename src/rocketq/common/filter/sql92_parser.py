"""A recursive-descent parser for RocketMQ's SQL92 selectors (SelectorParser.jj).

Grammar, lowest precedence first::

    selector    := or EOF
    or          := and (OR and)*
    and         := equality (AND equality)*
    equality    := comparison ( "=" comparison | "<>" comparison | IS [NOT] NULL )*
    comparison  := unary ( (">" | ">=" | "<" | "<=") unary
                         | [NOT] BETWEEN unary AND unary
                         | [NOT] IN "(" string ("," string)* ")"
                         | [NOT] (CONTAINS | STARTSWITH | ENDSWITH) string )*
    unary       := "+" unary | "-" unary | NOT unary | primary
    primary     := literal | identifier | "(" or ")"

As in RocketMQ, ``NOT`` binds to the next primary: ``NOT a = 'x'`` is ``(NOT a) = 'x'``;
write ``NOT (a = 'x')``. The checks RocketMQ makes while building the tree are made here too
(only numbers and properties are ordered, NULL is not compared with ``=``, BETWEEN bounds
in order, a selector must be a condition), and every error names what and where.
"""

from __future__ import annotations

import functools

from rocketq.common.filter import sql92_expression as ex
from rocketq.common.filter.sql92_lexer import (
    DECIMAL,
    EOF,
    FLOAT,
    ID,
    STRING,
    SYMBOL,
    Token,
    string_value,
    tokenize,
)
from rocketq.errors import FilterExpressionError

INVALID = "Invalid MessageSelector. "
_RELATIONAL = (">", ">=", "<", "<=")
_STRING_TESTS = ("CONTAINS", "STARTSWITH", "ENDSWITH")
_CONSTANTS = {
    "TRUE": ex.BooleanConstant(True),
    "FALSE": ex.BooleanConstant(False),
    "NULL": ex.BooleanConstant(None),
}


def parse_sql92(text: str) -> ex.BooleanExpression:
    """The selector's tree; FilterExpressionError says what is wrong and where."""
    try:
        return _Parser(tokenize(text)).selector()
    except FilterExpressionError as exc:
        raise FilterExpressionError(INVALID + str(exc)) from None


@functools.lru_cache(maxsize=256)
def _compile(text: str) -> ex.BooleanExpression | FilterExpressionError:
    try:
        return parse_sql92(text)
    except FilterExpressionError as exc:
        return exc


def compile_sql92(text: str) -> ex.BooleanExpression:
    """``parse_sql92`` with a cache of results and errors (SelectorParser's PARSE_CACHE)."""
    result = _compile(text)
    if isinstance(result, FilterExpressionError):
        raise FilterExpressionError(str(result))
    return result


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0

    # ------------------------------------------------------------------ tokens

    @property
    def token(self) -> Token:
        return self.tokens[self.pos]

    def _at(self, *images: str, ahead: int = 0) -> bool:
        tok = self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]
        key = tok.image if tok.kind == SYMBOL else tok.kind
        return key in images

    def _take(self, *images: str) -> Token | None:
        if self._at(*images):
            tok = self.token
            self.pos += 1
            return tok
        return None

    def _expect(self, image: str, expecting: str) -> Token:
        tok = self._take(image)
        if tok is None:
            raise self._unexpected(expecting)
        return tok

    def _unexpected(self, expecting: str) -> FilterExpressionError:
        tok = self.token
        return FilterExpressionError(
            f"Encountered {tok.describe()} at line {tok.line}, column {tok.column}. "
            f"Was expecting {expecting}."
        )

    # ------------------------------------------------------------------ grammar

    def selector(self) -> ex.BooleanExpression:
        expr = self._or()
        if self.token.kind != EOF:
            raise self._unexpected("AND, OR, a comparison or the end of the selector")
        return _as_boolean(expr)

    def _or(self) -> ex.Expression:
        left = self._and()
        while self._take("OR"):
            left = ex.Or(_as_boolean(left), _as_boolean(self._and()))
        return left

    def _and(self) -> ex.Expression:
        left = self._equality()
        while self._take("AND"):
            left = ex.And(_as_boolean(left), _as_boolean(self._equality()))
        return left

    def _equality(self) -> ex.Expression:
        left = self._comparison()
        while True:
            if self._take("="):
                left = _equal(left, self._comparison())
            elif self._take("<>"):
                left = ex.Not(_equal(left, self._comparison()))
            elif self._take("IS"):
                negated = self._take("NOT") is not None
                self._expect("NULL", "NULL" if negated else "NULL or NOT NULL")
                test = ex.Equal(left, _CONSTANTS["NULL"])
                left = ex.Not(test) if negated else test
            else:
                return left

    def _comparison(self) -> ex.Expression:
        left = self._unary()
        while True:
            negated = self._at("NOT") and self._at("BETWEEN", "IN", *_STRING_TESTS, ahead=1)
            if negated:
                self.pos += 1
            if not negated and (tok := self._take(*_RELATIONAL)) is not None:
                left = _relation(tok.image, left, self._unary())
            elif self._take("BETWEEN"):
                low = self._unary()
                self._expect("AND", "AND after the BETWEEN's lower bound")
                left = _between(left, low, self._unary(), negated)
            elif self._take("IN"):
                left = self._in(left, negated)
            elif (tok := self._take(*_STRING_TESTS)) is not None:
                left = ex.StringTest(tok.kind, left, self._string(), negated)
            else:
                return left

    def _in(self, left: ex.Expression, negated: bool) -> ex.BooleanExpression:
        if not isinstance(left, ex.Property):
            raise FilterExpressionError(f"Expected a property for In expression, got: {left}")
        self._expect("(", '"(" after IN')
        values = [self._string()]
        while self._take(","):
            values.append(self._string())
        self._expect(")", '"," or ")" in the IN list')
        return ex.In(left, frozenset(values), negated)

    def _string(self) -> str:
        tok = self._take(STRING)
        if tok is None:
            raise self._unexpected("a string literal")
        return string_value(tok.image)

    def _unary(self) -> ex.Expression:
        if self._take("+"):
            return self._unary()
        if self._take("-"):
            return ex.Negate(self._unary())
        if self._take("NOT"):
            return ex.Not(_as_boolean(self._unary()))
        return self._primary()

    def _primary(self) -> ex.Expression:
        tok = self.token
        if tok.kind in (STRING, DECIMAL, FLOAT, *_CONSTANTS):
            self.pos += 1
            return _literal(tok)
        if tok.kind == ID:
            self.pos += 1
            return ex.Property(tok.image)
        if self._take("("):
            expr = self._or()
            self._expect(")", '")"')
            return expr
        raise self._unexpected('a literal, a property name, NOT, "(", "+" or "-"')


def _literal(tok: Token) -> ex.Constant:
    if tok.kind == STRING:
        return ex.Constant(string_value(tok.image))
    if tok.kind == DECIMAL:
        value = int(tok.image.rstrip("lL"))
        if value > ex.LONG_MAX:
            raise FilterExpressionError(f"Number out of range of a long: {tok.image}")
        return ex.Constant(value)
    if tok.kind == FLOAT:
        return ex.Constant(float(tok.image))
    return _CONSTANTS[tok.kind]


def _as_boolean(expr: ex.Expression) -> ex.BooleanExpression:
    if isinstance(expr, ex.BooleanExpression):
        return expr
    if isinstance(expr, ex.Property):
        return ex.BooleanCast(expr)
    raise FilterExpressionError(f"Expression will not result in a boolean value: {expr}")


def _equal(left: ex.Expression, right: ex.Expression) -> ex.BooleanExpression:
    for side in (left, right):
        if isinstance(side, ex.Constant) and side.value is None:
            raise FilterExpressionError(f"'{side}' cannot be compared (use IS NULL).")
    if (
        isinstance(left, ex.BooleanConstant)
        and isinstance(right, ex.Constant)
        and not isinstance(right, ex.BooleanConstant)
    ):
        raise FilterExpressionError(f"'{left}' cannot be compared with '{right}'")
    return ex.Equal(left, right)


def _check_ordered(expr: ex.Expression) -> None:
    if isinstance(expr, ex.Constant):
        if isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
            return
        raise FilterExpressionError(f"Value '{expr}' cannot be compared.")
    if isinstance(expr, ex.BooleanExpression):
        raise FilterExpressionError(f"Value '{expr}' cannot be compared.")


def _relation(symbol: str, left: ex.Expression, right: ex.Expression) -> ex.BooleanExpression:
    _check_ordered(left)
    _check_ordered(right)
    return ex.Comparison(symbol, left, right)


def _between(
    value: ex.Expression, low: ex.Expression, high: ex.Expression, negated: bool
) -> ex.BooleanExpression:
    if negated:
        return ex.Or(_relation("<", value, low), _relation(">", value, high))
    if isinstance(low, ex.Constant) and isinstance(high, ex.Constant):
        if low.value is None or high.value is None:
            raise FilterExpressionError("Illegal values of between, values can not be null!")
        if ex.compare(high.value, low.value) < 0:
            raise FilterExpressionError(
                f"Illegal values of between, left value({low}) must less than or equal to "
                f"right value({high})"
            )
    return ex.And(_relation(">=", value, low), _relation("<=", value, high))
