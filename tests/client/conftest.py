"""The client tests take the ``cluster`` fixture of tests/conftest.py.

These names stay here only for tests/client/test_transaction_producer.py, which another change
of issue 17 edits at the same time (listed in tests/test_layout.py's PENDING; delete when it
imports from ``rocketq.testing``)."""

from __future__ import annotations

from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER
from rocketq.testing.store import small_store_properties

SMALL_STORE = small_store_properties()

__all__ = ["FAST_CLIENT", "FAST_CONSUMER", "SMALL_STORE"]
