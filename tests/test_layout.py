"""tests/ mirrors src/rocketq/ and shares its helpers through ``rocketq.testing``.

- every folder of test modules is a package of src/rocketq (``tests/store/ha`` tests
  ``rocketq.store.ha``), or one of the categories that cut across packages: ``e2e`` (through
  real sockets across components) and ``interop`` (real RocketMQ clients);
- no module imports a test module (``test_*.py``): a helper two test modules need lives in a
  helper module, not beside the tests of one of them;
- no module imports a helper of another folder: what two folders share lives in
  ``rocketq.testing`` (clusters on port 0, stores, strategies, vectors, fault injectors), except
  the interop runners, which drive clients that only tests/interop holds.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from rocketq.testing.source_ast import parse

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src" / "rocketq"
CATEGORIES = {"e2e", "interop"}
# helpers of the real-client category: the drivers they start live in tests/interop
SHARED_RUNNERS = {
    "tests.interop.cpp_runner",
    "tests.interop.ali_runner",
    "tests.interop.rmq5_runner",
}


def python_modules() -> Iterator[Path]:
    for path in sorted(TESTS.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield path


def module_name(path: Path) -> str:
    return ".".join(("tests", *path.relative_to(TESTS).with_suffix("").parts))


def imported_tests_modules(path: Path) -> Iterator[str]:
    """Every ``tests....`` module that ``path`` imports (names imported from a package count
    as modules when a module of that name exists)."""
    for node in ast.walk(parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            names += [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("tests.") and _exists(name):
                yield name


def _exists(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (TESTS / relative).with_suffix(".py").is_file() or (TESTS / relative).is_dir()


def test_every_folder_of_tests_is_a_package_of_rocketq_or_a_category() -> None:
    strays = []
    for folder in sorted({p.parent for p in python_modules()} - {TESTS}):
        parts = folder.relative_to(TESTS).parts
        if parts[0] in CATEGORIES:
            continue
        if not (SRC.joinpath(*parts) / "__init__.py").is_file():
            strays.append("/".join(parts))
    assert strays == [], f"tests/ folders with no rocketq package of that name: {strays}"


def test_no_module_imports_a_test_module_or_another_folders_helper() -> None:
    found = set()
    for path in python_modules():
        importer = module_name(path)
        package = importer.rsplit(".", 1)[0]
        for imported in imported_tests_modules(path):
            leaf = imported.rsplit(".", 1)[-1]
            helper_package = imported.rsplit(".", 1)[0]
            if leaf.startswith("test_"):
                found.add((importer, imported))
            elif (TESTS / Path(*imported.split(".")[1:])).is_dir():
                continue  # ``from tests.store import x``: x is checked as a module of its own
            elif not (package + ".").startswith(helper_package + ".") and (
                imported not in SHARED_RUNNERS
            ):
                found.add((importer, imported))
    assert found == set(), "put what they share in rocketq.testing or a helper module"


def test_no_module_only_re_exports_names_from_elsewhere() -> None:
    """A name moved to ``rocketq.testing`` is imported from there, not through a shim left in
    its old place (a module of nothing but imports, ``__all__`` and aliases of imports)."""
    shims = []
    for path in python_modules():
        if path.name == "__init__.py":
            continue
        tree = parse(path.read_text(), str(path))
        imported = {
            (alias.asname or alias.name).split(".")[0]
            for node in tree.body
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        if imported and all(_re_exports(node, imported) for node in tree.body):
            shims.append(module_name(path))
    assert shims == [], f"re-export shims: import from where the names live: {shims}"


def _re_exports(node: ast.stmt, imported: set[str]) -> bool:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # the docstring
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        names = {t.id for t in node.targets if isinstance(t, ast.Name)}
        if names == {"__all__"}:
            return True
        used = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
        return bool(used) and used <= imported  # ``SMALL = small_store_properties()``
    return False
