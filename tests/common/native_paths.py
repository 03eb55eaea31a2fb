"""Moved to ``rocketq.testing.record_paths``; these names stay here only for the modules of
tests/spark, tests/common/test_native_record.py and tests/store/test_native_scan.py, which
other changes of issue 17 edit at the same time (listed in tests/test_layout.py's PENDING;
delete when they import from there)."""

from rocketq.testing.record_paths import on_both, record_paths

__all__ = ["on_both", "record_paths"]
