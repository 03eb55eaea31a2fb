"""Shared test configuration: Hypothesis profiles and the cluster fixtures (real servers on
127.0.0.1 port 0, from ``rocketq.testing``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from rocketq.common import native_record
from rocketq.testing.acl import ACCOUNTS, AclCluster, run_acl_cluster
from rocketq.testing.cluster import Cluster, run_cluster

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    """A name server and a broker on 127.0.0.1 port 0 (``rocketq.testing.cluster``)."""
    async with run_cluster(tmp_path) as running:
        yield running


@pytest.fixture
async def acl_cluster(tmp_path: Path) -> AsyncIterator[AclCluster]:
    """A cluster whose broker enforces ``rocketq.testing.acl``'s accounts, re-read every 100 ms."""
    async with run_acl_cluster(tmp_path, ACCOUNTS, acl_watch_interval_ms=100) as running:
        yield running


@pytest.fixture
def c_record_paths() -> Iterator[None]:
    """The C record paths on for the test, also under ``ROCKETQ_NATIVE=0``: for tests whose
    subject is the C walk itself, checked against the Python reference."""
    was = native_record.RECORD is not None
    native_record.use(True)
    yield
    native_record.use(was)
