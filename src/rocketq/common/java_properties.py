"""Java ``.properties`` text (``broker.conf``, ``namesrv.conf``, UPDATE_*_CONFIG bodies).

Comments (``#``/``!``), ``=``/``:``/whitespace separators, line continuations and escapes
(``\\t``, ``\\uXXXX``) as ``java.util.Properties.load`` reads them.
"""

from __future__ import annotations


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text: comments, ``=``/``:``/space separators, continuations."""
    result: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip()
        i += 1
        if not line or line[0] in "#!":
            continue
        while _ends_with_continuation(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip()
            i += 1
        key, value = _split_key_value(line)
        result[_unescape(key)] = _unescape(value)
    return result


def _ends_with_continuation(line: str) -> bool:
    backslashes = len(line) - len(line.rstrip("\\"))
    return backslashes % 2 == 1


def _split_key_value(line: str) -> tuple[str, str]:
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=: \t\f":
            break
        i += 1
    key = line[:i]
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":") and (i >= len(line) or line[i] in " \t\f=:"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "u" and i + 6 <= len(s):
                out.append(chr(int(s[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(n, n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)
