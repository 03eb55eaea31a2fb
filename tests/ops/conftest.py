"""Fixtures of the operations tests: the client tests' name server + broker (real servers on
127.0.0.1:0)."""

from __future__ import annotations

from tests.client.conftest import Cluster, cluster

__all__ = ["Cluster", "cluster"]
