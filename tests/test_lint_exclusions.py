"""ruff and mypy check every hand-written module.

What pyproject.toml lets them skip (ruff's exclude and per-file-ignores, mypy's exclude and
overrides) may name generated code and third-party modules only; mypy's ``files`` cover every
package of ``src/``; and no module switches a checker off for itself (``# ruff: noqa``,
``# mypy: ignore-errors``, a file-level ``# type: ignore``). A line may still be excused, but
only for a named code (``# noqa: E741``, ``# type: ignore[arg-type]``), never wholesale.

A generated file says so in its first lines (``@generated`` or ``DO NOT EDIT``): the protobuf
and gRPC modules of ``rocketq.proxy.protos`` (``make protos``) are the only ones, and every
exclusion or override must match nothing else of ours.
"""

from __future__ import annotations

import io
import re
import subprocess
import tokenize
import tomllib
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("src", "tests", "bench")
FIRST_PARTY = ("rocketq", "pyspark_rocketq", "pyspark_rocketq_store")
GENERATED_MARKERS = ("@generated", "DO NOT EDIT")

_FILE_LEVEL = re.compile(r"#\s*(ruff|flake8|mypy|pyright)\s*:", re.IGNORECASE)
_BARE_NOQA = re.compile(r"#\s*noqa(?!:\s*[A-Z]+[0-9]+)", re.IGNORECASE)
_BARE_TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore(?!\[)")


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def source_files() -> list[str]:
    """The Python files git tracks under src/, tests/ and bench/ (paths from the root)."""
    listed = subprocess.run(
        [
            "git",
            "ls-files",
            "--",
            *(f"{d}/*.py" for d in CHECKED),
            *(f"{d}/*.pyi" for d in CHECKED),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return sorted(p for p in listed if (ROOT / p).exists())


def is_generated(path: str) -> bool:
    with (ROOT / path).open(encoding="utf-8") as f:
        head = "".join(line for _, line in zip(range(5), f, strict=False))
    return any(marker in head for marker in GENERATED_MARKERS)


def matches(path: str, pattern: str, *, regex: bool = False) -> bool:
    """Whether a ruff path pattern (a glob, a basename glob or a folder) or a mypy exclude (a
    regular expression, ``regex``) names ``path``."""
    if regex:
        return re.search(pattern, path) is not None
    folder = pattern.rstrip("/")
    return (
        fnmatch(path, pattern) or fnmatch(Path(path).name, pattern) or path.startswith(folder + "/")
    )


def hand_written_matches(patterns: list[str], *, regex: bool = False) -> dict[str, list[str]]:
    files = [p for p in source_files() if not is_generated(p)]
    found = {
        pattern: [p for p in files if matches(p, pattern, regex=regex)] for pattern in patterns
    }
    return {pattern: hits for pattern, hits in found.items() if hits}


def comments(source: str) -> Iterator[tuple[int, str, bool]]:
    """(line, comment, alone on its line) of each comment of ``source``."""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string, tok.line.strip().startswith("#")


def suppressions(source: str) -> list[tuple[int, str]]:
    """(line, what) of each comment that switches a checker off beyond one named code."""
    found = []
    for number, comment, alone in comments(source):
        if _FILE_LEVEL.match(comment):
            found.append((number, "a file-level checker directive"))
        elif _BARE_NOQA.search(comment) or _BARE_TYPE_IGNORE.search(comment):
            found.append((number, "an excuse without a code"))
        elif alone and comment.startswith("# type: ignore"):
            found.append((number, "a type: ignore on its own line (the whole file)"))
    return found


def test_the_pattern_matcher_names_files_by_glob_basename_folder_and_regex() -> None:
    assert matches("src/rocketq/cli/acl.py", "src/rocketq/cli/*.py")
    assert matches("src/rocketq/cli/acl.py", "acl.py")
    assert matches("src/rocketq/cli/acl.py", "src/rocketq/")
    assert matches("src/rocketq/cli/acl.py", r"cli/a.l\.py$", regex=True)
    assert not matches("src/rocketq/cli/acl.py", "tests/")


def test_the_scan_finds_each_kind_of_wholesale_suppression_and_no_named_one() -> None:
    source = (
        "# ruff: noqa\n"
        "# type: ignore\n"
        '"""# mypy: ignore-errors in a docstring is no directive."""\n'
        "x = 1  # noqa\n"
        "y = f()  # type: ignore\n"
        "l = 2  # noqa: E741\n"
        "z = g()  # type: ignore[arg-type]\n"
        "# mypy: disable-error-code=misc\n"
    )
    assert suppressions(source) == [
        (1, "a file-level checker directive"),
        (2, "an excuse without a code"),
        (4, "an excuse without a code"),
        (5, "an excuse without a code"),
        (8, "a file-level checker directive"),
    ]


def test_ruff_excludes_and_per_file_ignores_name_generated_files_only() -> None:
    ruff = pyproject()["tool"]["ruff"]
    lint = ruff.get("lint", {})
    patterns = [
        *ruff.get("exclude", []),
        *ruff.get("extend-exclude", []),
        *lint.get("exclude", []),
        *ruff.get("per-file-ignores", {}),
        *lint.get("per-file-ignores", {}),
        *lint.get("extend-per-file-ignores", {}),
    ]
    assert hand_written_matches(patterns) == {}


def test_mypy_checks_every_package_of_src() -> None:
    files = {Path(f).as_posix().rstrip("/") for f in pyproject()["tool"]["mypy"]["files"]}
    packages = {
        f"src/{p.parent.name}" for p in (ROOT / "src").glob("*/__init__.py") if p.parent.is_dir()
    }
    assert packages <= files
    assert set(FIRST_PARTY) == {p.removeprefix("src/") for p in packages}


def test_mypy_excludes_and_overrides_name_third_party_or_generated_modules_only() -> None:
    mypy = pyproject()["tool"]["mypy"]
    exclude = mypy.get("exclude", [])
    patterns = [exclude] if isinstance(exclude, str) else exclude
    assert hand_written_matches(patterns, regex=True) == {}
    ours = [
        module
        for override in mypy.get("overrides", [])
        for module in _as_list(override["module"])
        if module.split(".")[0] in FIRST_PARTY and not _generated_module(module)
    ]
    assert ours == [], "a mypy override on our own modules relaxes a hand-written module"


def test_no_module_switches_a_checker_off_and_every_excuse_names_its_code() -> None:
    found = [
        f"{path}:{number}: {what}"
        for path in source_files()
        if not is_generated(path)
        for number, what in suppressions((ROOT / path).read_text(encoding="utf-8"))
    ]
    assert found == []


def _generated_module(module: str) -> bool:
    """Whether ``module`` names generated files only (its ``.py`` and ``.pyi``, no wildcard)."""
    stem = ROOT / "src" / Path(*module.split("."))
    files = [p for p in (stem.with_suffix(".py"), stem.with_suffix(".pyi")) if p.exists()]
    root = ROOT.as_posix() + "/"
    return bool(files) and all(is_generated(p.as_posix().removeprefix(root)) for p in files)


def _as_list(modules: str | list[str]) -> list[str]:
    return [modules] if isinstance(modules, str) else modules
