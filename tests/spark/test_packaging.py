"""The ``pyspark_*`` modules Spark imports on its data-source lookup: cheap, no side effects.

Spark's lookup imports every top-level ``pyspark_*`` module on the path (PySpark's
pyspark/sql/worker/lookup_data_sources.py), in every session, whether or not the job uses
rocketq. Importing ours must only define classes: no thread, no open file or socket, and neither
the client nor the broker machinery loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.timeout(120)]

PROBE = """
import json, os, sys, threading
fds = set(os.listdir("/proc/self/fd"))
import pyspark_rocketq, pyspark_rocketq_store
print(json.dumps({
    "threads": threading.active_count(),
    "new_fds": sorted(set(os.listdir("/proc/self/fd")) - fds),
    "modules": sorted(m for m in sys.modules if m.startswith("rocketq")),
    "names": [pyspark_rocketq.DefaultSource.name(), pyspark_rocketq_store.DefaultSource.name()],
}))
"""
HEAVY = ("rocketq.client", "rocketq.remoting", "rocketq.broker", "rocketq.store.")


def test_importing_the_data_source_modules_starts_nothing_and_loads_no_client() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    probe = json.loads(out.stdout)
    assert probe["names"] == ["rocketq", "rocketq-store"]
    assert probe["threads"] == 1
    assert probe["new_fds"] == []
    loaded = [m for m in probe["modules"] if m.startswith(HEAVY)]
    assert loaded == []
