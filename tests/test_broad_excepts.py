"""Broad handlers say why: every ``except Exception`` / ``except BaseException`` in ``src/``
either re-raises or carries, on its own line, a comment giving the reason it must catch
everything (a processor answers SYSTEM_ERROR, a listener's error becomes RECONSUME_LATER, a
periodic service outlives one failed round...). ruff's BLE rule catches the silent ones; this
test also covers those that log and go on, which BLE lets through."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROAD = {"Exception", "BaseException"}


def unexplained(source: str) -> list[int]:
    """Line numbers of broad handlers that neither re-raise nor say why."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler):
            continue
        names = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        if not any(isinstance(n, ast.Name) and n.id in BROAD for n in names):
            continue
        reraises = any(isinstance(n, ast.Raise) and n.exc is None for n in node.body)
        comment = lines[node.lineno - 1].partition("#")[2].strip()
        if not reraises and len(comment) < 10:
            found.append(node.lineno)
    return found


def test_every_broad_handler_in_src_reraises_or_says_why() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for line in unexplained(path.read_text())
    ]
    assert offenders == []


def test_the_check_refuses_a_silent_handler_and_accepts_the_explained_ones() -> None:
    source = (
        "try:\n    f()\nexcept Exception:\n    pass\n"
        "try:\n    f()\nexcept (OSError, BaseException):\n    log()\n"
        "try:\n    f()\nexcept Exception:  # a listener's error is logged\n    log()\n"
        "try:\n    f()\nexcept BaseException:\n    close()\n    raise\n"
        "try:\n    f()\nexcept OSError:\n    pass\n"
    )
    assert unexplained(source) == [3, 7]


def test_ruff_selects_the_blind_except_try_async_and_perf_families() -> None:
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert {"BLE", "TRY", "ASYNC", "PERF"} <= set(lint["select"])
    assert {"BLE001", "ASYNC110", "PERF401"}.isdisjoint(lint.get("ignore", []))
