"""Run a piece of code on the compiled record paths and on the pure-Python ones (parity tests)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rocketq.common import native_record
from rocketq.errors import CorruptionError, DecodeError

T = TypeVar("T")


@contextmanager
def record_paths(native: bool) -> Iterator[None]:
    """Select the C paths (``native``) or the pure-Python ones, and restore the choice."""
    before = native_record.RECORD
    native_record.use(native)
    try:
        yield
    finally:
        native_record.RECORD = before


def outcome(fn: Callable[[], T]) -> tuple[str, object]:
    """("ok", value) or (exception class name, its args): what a call did, to compare."""
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 -- records whatever a path raised, for the parity comparison
        return type(exc).__name__, exc.args


def on_both(fn: Callable[[], T]) -> tuple[tuple[str, object], tuple[str, object]]:
    """The outcome of ``fn`` on the pure-Python paths, then on the C paths."""
    with record_paths(False):
        python = outcome(fn)
    with record_paths(True):
        compiled = outcome(fn)
    return python, compiled


# what damaged bytes may raise, on either path: the decode and corruption errors
DAMAGE_ERRORS = (DecodeError, CorruptionError)


def damage_outcome(fn: Callable[[], T]) -> tuple[str, object]:
    """:func:`outcome` for damaged input: a result or a decode error. Any other exception
    propagates and fails the test, so two paths that crash alike never count as agreeing."""
    try:
        return "ok", fn()
    except DAMAGE_ERRORS as exc:
        return type(exc).__name__, exc.args


def on_both_damaged(fn: Callable[[], T]) -> tuple[tuple[str, object], tuple[str, object]]:
    """:func:`on_both` for damaged input (see :func:`damage_outcome`)."""
    with record_paths(False):
        python = damage_outcome(fn)
    with record_paths(True):
        compiled = damage_outcome(fn)
    return python, compiled
