"""plain_acl.yml's dataVersion is the shared DataVersion, bumped on each rewrite."""

from __future__ import annotations

from typing import Any

import pytest

from rocketq.broker.acl.plain_acl_config import next_data_version
from rocketq.remoting.protocol.data_version import DataVersion


def test_a_rewrite_bumps_the_files_data_version_counter_and_stamps_it() -> None:
    raw = {"dataVersion": [{"counter": 4, "timestamp": 1}], "accounts": []}
    bumped = next_data_version(raw)
    [entry] = bumped["dataVersion"]
    assert entry["counter"] == 5
    assert entry["timestamp"] > 1
    assert DataVersion.from_json(entry).counter == 5
    assert bumped["accounts"] == []
    assert raw["dataVersion"][0]["counter"] == 4


@pytest.mark.parametrize("version", [None, [], ["x"], [{"counter": "many"}], {"counter": 3}])
def test_a_missing_or_malformed_data_version_restarts_at_one(version: Any) -> None:
    [entry] = next_data_version({"dataVersion": version})["dataVersion"]
    assert entry["counter"] == 1
