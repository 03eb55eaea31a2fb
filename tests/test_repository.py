"""The repository stands alone: every ``*.md`` file that a comment, a docstring or a document
cites is in the repository, so a maintainer can check each claim from a checkout.

Scanned: the comments and docstrings of Python files, and the whole text of every other text
file, under ``src/``, ``tests/``, ``bench/`` and ``docs/`` and at the top level. A cited name
resolves against the citing file's folder or the repository root (a page of ``docs/`` names
its neighbours bare, any file names ``RELIABILITY`` or ``docs/spark`` with their ``.md``); a
path that climbs out of the repository (``../shared/...``) never resolves. Claims cite
RocketMQ's (or Spark's) source file and class, or a page under ``docs/``; a section sign points
into a spec that is not here, so it is refused too.
"""

from __future__ import annotations

import ast
import io
import posixpath
import re
import subprocess
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.testing.source_ast import parse

ROOT = Path(__file__).resolve().parents[1]
SCANNED_DIRS = ("src/", "tests/", "bench/", "docs/")
# A file name ending in .md, with an optional relative path; URLs never match (their path
# follows "//" and a host name, which the look-behind refuses).
MD_CITATION = re.compile(r"(?<![\w./-])((?:\.{1,2}/)*[\w-][\w.-]*(?:/[\w.-]+)*\.md)(?![\w-])")
SECTION_SIGN = re.compile(r"§\s*[\w.-]*")


def repository_files() -> set[str]:
    """Every file in the checkout, tracked or new, minus what .gitignore ignores."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the repository's file list is unknown")
    return {name for name in out.decode().split("\0") if name and (ROOT / name).is_file()}


def scanned(files: set[str]) -> list[str]:
    return sorted(f for f in files if "/" not in f or f.startswith(SCANNED_DIRS))


def python_prose(source: str) -> Iterator[tuple[int, str]]:
    """(first line, text) of each comment, docstring and other bare string statement."""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.lineno, node.value.value


def prose(path: str, text: str) -> Iterator[tuple[int, str]]:
    if path.endswith(".py"):
        yield from python_prose(text)
    else:
        yield 1, text


def resolves(citing: str, cited: str, files: set[str]) -> bool:
    """True when ``cited`` names a repository file, from the citing file's folder or the root."""
    for base in (posixpath.dirname(citing), ""):
        name = posixpath.normpath(posixpath.join(base, cited))
        if not name.startswith("../") and name in files:
            return True
    return False


def offenders(path: str, text: str, files: set[str]) -> Iterator[str]:
    """``path:line: reason`` for each citation of a file that is not in the repository."""
    for first_line, chunk in prose(path, text):
        for match in MD_CITATION.finditer(chunk):
            if not resolves(path, match.group(1), files):
                line = first_line + chunk.count("\n", 0, match.start())
                yield f"{path}:{line}: cites {match.group(1)}, which is not in the repository"
        for match in SECTION_SIGN.finditer(chunk):
            line = first_line + chunk.count("\n", 0, match.start())
            yield f"{path}:{line}: cites a spec section ({match.group(0)})"


def read_text(path: str) -> str | None:
    try:
        return (ROOT / path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None  # a binary file cites nothing


def test_every_cited_markdown_file_is_in_the_repository() -> None:
    files = repository_files()
    found = [
        offence
        for path in scanned(files)
        if (text := read_text(path)) is not None
        for offence in offenders(path, text, files)
    ]
    assert not found, "citations a checkout cannot follow:\n" + "\n".join(found)


def test_the_check_refuses_a_spec_citation_and_accepts_the_docs() -> None:
    files = {"README.md", "docs/spark.md", "docs/transactions.md", "src/rocketq/store/x.py"}
    source = (
        '"""Recovery (store.md §7.3), the options of docs/spark.md, the guide ../shared/STYLE.md,\n'
        'README.md and docs/nothing.md."""\n'
        "x = 'store.md in code is not prose'  # see https://example.org/a/store.md and spark.md\n"
    )
    found = list(offenders("src/rocketq/store/x.py", source, files))
    assert found == [
        "src/rocketq/store/x.py:3: cites spark.md, which is not in the repository",
        "src/rocketq/store/x.py:1: cites store.md, which is not in the repository",
        "src/rocketq/store/x.py:1: cites ../shared/STYLE.md, which is not in the repository",
        "src/rocketq/store/x.py:2: cites docs/nothing.md, which is not in the repository",
        "src/rocketq/store/x.py:1: cites a spec section (§7.3)",
    ]
    doc = "See [transactions](transactions.md), `RELIABILITY.md` and spark.md.\n"
    assert list(offenders("docs/client.md", doc, files)) == [
        "docs/client.md:1: cites RELIABILITY.md, which is not in the repository"
    ]
