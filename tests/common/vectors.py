"""Moved to ``rocketq.testing.vectors``; these names stay here only for the modules of
tests/spark and tests/common/test_native_record.py, which other changes of issue 17 edit at
the same time (listed in tests/test_layout.py's PENDING; delete when they import from there)."""

from rocketq.testing.vectors import HEXES, OFFSETS, message, record

__all__ = ["HEXES", "OFFSETS", "message", "record"]
