"""Moved to ``rocketq.testing.store``; these names stay here only for
tests/store/ha/test_replication.py and tests/store/test_store_crash.py, which another change
of issue 17 edits at the same time (listed in tests/test_layout.py's PENDING; delete when
they import from there)."""

from rocketq.testing.store import new_msg
from rocketq.testing.store import small_store_config as small_config

__all__ = ["new_msg", "small_config"]
