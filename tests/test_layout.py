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

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src" / "rocketq"
CATEGORIES = {"e2e", "interop"}
# helpers of the real-client category: the drivers they start live in tests/interop
SHARED_RUNNERS = {"tests.interop.cpp_runner", "tests.interop.ali_runner"}
# imports in modules that other changes of issue 17 rewrite at the same time (the weak-test
# fixes and tests/spark, tests/remoting): (importing module, imported module). Each entry is to
# go once those changes are merged and the module imports from rocketq.testing or a helper.
PENDING = {
    ("tests.broker.test_master_slave", "tests.store.ha.test_replication"),
    ("tests.store.ha.test_link_faults", "tests.store.ha.test_replication"),
    ("tests.store.ha.test_wire_format", "tests.store.ha.test_replication"),
    ("tests.client.test_transaction_timing", "tests.client.test_transaction_producer"),
    ("tests.e2e.test_pull_filters", "tests.e2e.test_broker_e2e"),
    ("tests.interop.test_cpp_transaction", "tests.interop.test_cpp_client"),
    ("tests.spark.test_store_columns", "tests.common.vectors"),
    ("tests.spark.test_store_split", "tests.common.native_paths"),
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
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
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
    assert found - PENDING == set(), "put what they share in rocketq.testing"
    assert PENDING - found == set(), "fixed: drop these from PENDING"
