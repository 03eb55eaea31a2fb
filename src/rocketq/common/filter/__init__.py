"""RocketMQ's message selectors, shared by the broker (evaluation on pull) and the client.

``sql92_lexer`` turns a selector into tokens, ``sql92_parser`` builds the expression tree of
``sql92_expression`` (RocketMQ's SelectorParser.jj grammar), and :func:`compile_sql92` caches
compiled selectors as RocketMQ's SelectorParser does.
"""

from __future__ import annotations

from rocketq.common.filter.sql92_expression import BooleanExpression
from rocketq.common.filter.sql92_parser import compile_sql92, parse_sql92

__all__ = ["BooleanExpression", "compile_sql92", "parse_sql92"]
