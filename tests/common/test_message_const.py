"""Property names are spelled once, in ``rocketq.common.message_const`` (RocketMQ's
MessageConst): no other module of ``src/`` writes one as a string literal."""

from __future__ import annotations

import ast
from pathlib import Path

from rocketq.common import message_const as mc

SRC = Path(__file__).resolve().parents[2] / "src"
PROPERTY_NAMES = {
    value: name
    for name, value in vars(mc).items()
    if name.startswith("PROPERTY_") and isinstance(value, str)
}


#: modules whose literals are data, not code: the golden vectors spell their input messages as
#: the vector tables (docs/store-format.md) do, independent of the constants they check
DATA = {"rocketq/testing/vectors.py"}


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def property_literals(source: str) -> list[tuple[int, str]]:
    """(line, constant name) of each string literal equal to a property name, docstrings aside."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [
        (node.lineno, PROPERTY_NAMES[node.value])
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in PROPERTY_NAMES
        and id(node) not in skip
    ]


def test_the_scan_finds_a_literal_property_name_but_not_a_docstring() -> None:
    source = '"""UNIQ_KEY in a docstring."""\nx = msg.properties.get("UNIQ_KEY")\n'
    assert property_literals(source) == [(2, "PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX")]


def test_no_module_outside_message_const_spells_a_property_name() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: use mc.{name}"
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "message_const.py" and path.relative_to(SRC).as_posix() not in DATA
        for line, name in property_literals(path.read_text(encoding="utf-8"))
    ]
    assert found == []
