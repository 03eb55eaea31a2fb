"""Tokens of RocketMQ's SQL92 selector language (SelectorParser.jj).

Keywords and identifiers are case-insensitive; an identifier is ``[a-z_$][a-z0-9_$]*``.
Literals: decimal integers (``0`` or ``[1-9][0-9]*``, an optional ``L``), floating point
(``5.5``, ``5.``, ``.5``, ``5E10``), strings in single quotes with ``''`` for a quote.
``--`` comments run to the end of the line, ``/* */`` comments may span lines. Where two
token patterns match, the longer match wins, as in JavaCC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rocketq.errors import FilterExpressionError

KEYWORDS = frozenset(
    {
        "NOT",
        "AND",
        "OR",
        "BETWEEN",
        "IN",
        "TRUE",
        "FALSE",
        "NULL",
        "IS",
        "CONTAINS",
        "STARTSWITH",
        "ENDSWITH",
    }
)
SYMBOLS = ("<>", ">=", "<=", "=", ">", "<", "(", ")", ",", "+", "-")

ID = "ID"
STRING = "STRING"
DECIMAL = "DECIMAL"
FLOAT = "FLOAT"
SYMBOL = "SYMBOL"
EOF = "EOF"

_TOKEN_RE = re.compile(
    r"""
    (?P<space>[ \t\n\r\f]+)
  | (?P<line_comment>--[^\n\r]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<float>(?:[0-9]+\.[0-9]*(?:E[+-]?[0-9]+)?|\.[0-9]+(?:E[+-]?[0-9]+)?|[0-9]+E[+-]?[0-9]+))
  | (?P<decimal>0|[1-9][0-9]*L?)
  | (?P<string>'(?:''|[^'])*')
  | (?P<id>[a-z_$][a-z0-9_$]*)
  | (?P<symbol><>|>=|<=|[=><(),+-])
    """,
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # ID, STRING, DECIMAL, FLOAT, SYMBOL, EOF or an upper-case keyword
    image: str
    line: int
    column: int

    def describe(self) -> str:
        return "<EOF>" if self.kind == EOF else f'"{self.image}"'


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def tokenize(text: str) -> list[Token]:
    """All tokens of ``text`` ending with an EOF token; lexical errors raise."""
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            line, column = _position(text, pos)
            found = text[pos]
            if found == "'" or text.startswith("/*", pos):
                found = "<EOF>"  # an unterminated string or comment
            raise FilterExpressionError(
                f"Lexical error at line {line}, column {column}. Encountered: "
                f"{found if found == '<EOF>' else repr(found)}"
            )
        kind = m.lastgroup
        assert kind is not None
        if kind not in ("space", "line_comment", "block_comment"):
            image = m.group()
            line, column = _position(text, pos)
            tokens.append(Token(_kind(kind, image), image, line, column))
        pos = m.end()
    line, column = _position(text, len(text))
    tokens.append(Token(EOF, "", line, column))
    return tokens


def _kind(group: str, image: str) -> str:
    if group == "id":
        upper = image.upper()
        return upper if upper in KEYWORDS else ID
    return {"float": FLOAT, "decimal": DECIMAL, "string": STRING, "symbol": SYMBOL}[group]


def string_value(image: str) -> str:
    """The value of a string literal: quotes removed, ``''`` read as ``'``."""
    return image[1:-1].replace("''", "'")
