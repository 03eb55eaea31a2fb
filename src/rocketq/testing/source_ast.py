"""``ast.parse`` for the tests that read the repository's own source.

CPython 3.11 keeps the AST converter's recursion depth per interpreter, not per thread
(CPython issue gh-106905): an ``ast.parse`` racing another thread's (Python 3.11's traceback
module parses a source line to place its carets, so a background thread logging an exception
is enough) can fail with ``SystemError: AST constructor recursion depth mismatch`` although
the source is fine. The parse is pure, so it is simply done again.
"""

from __future__ import annotations

import ast

_ATTEMPTS = 5


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    for attempt in range(_ATTEMPTS):
        try:
            return ast.parse(source, filename)
        except SystemError as error:
            if "recursion depth mismatch" not in str(error) or attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
