"""The end-to-end tests take the ``cluster`` fixture of tests/conftest.py.

These names stay here only for tests/e2e/test_broker_e2e.py and tests/e2e/test_sql92_pull.py,
which another change of issue 17 edits at the same time (listed in tests/test_layout.py's
PENDING; delete when they import from ``rocketq.testing``)."""

from __future__ import annotations

from rocketq.testing.cluster import Cluster
from rocketq.testing.store import small_store_properties

SMALL_STORE = small_store_properties()

__all__ = ["SMALL_STORE", "Cluster"]
