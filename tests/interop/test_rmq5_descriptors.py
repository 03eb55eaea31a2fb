"""rocketq's generated gRPC descriptors equal those of the official 5.x Python client, message
by message, field by field (number, name, type, label, type name, oneof, ``optional``), every
enum value and every service method, each set dumped in its own venv."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.interop.rmq5_descriptors import dump
from tests.interop.rmq5_runner import needs_rmq5, run_rmq5

pytestmark = [pytest.mark.interop, pytest.mark.timeout(120)]

OURS = [f"rocketq.proxy.protos.{name}_pb2" for name in ("definition", "service", "admin")]
THEIRS = [f"rocketmq.grpc_protocol.{name}_pb2" for name in ("definition", "service", "admin")]


def differences(ours: dict[str, Any], theirs: dict[str, Any], path: str = "") -> list[str]:
    """Every key path where the two dumps differ, with both values."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        found: list[str] = []
        for key in sorted(set(ours) | set(theirs)):
            where = f"{path}/{key}"
            if key not in theirs:
                found.append(f"{where}: only in rocketq's")
            elif key not in ours:
                found.append(f"{where}: only in the client's")
            else:
                found.extend(differences(ours[key], theirs[key], where))
        return found
    return [] if ours == theirs else [f"{path}: rocketq {ours!r} != client {theirs!r}"]


@needs_rmq5
async def test_rocketq_descriptors_equal_the_python_clients(tmp_path: Path) -> None:
    out = await run_rmq5("rmq5_descriptors.py", *THEIRS, home=tmp_path, timeout_s=60)
    theirs = json.loads(out)
    assert theirs["packages"] == ["apache.rocketmq.v2"]
    assert len(theirs["messages"]) > 60
    assert "apache.rocketmq.v2.MessagingService" in theirs["services"]
    assert differences(dump(OURS), theirs) == []


def test_a_changed_field_shows_as_a_difference() -> None:
    ours = dump(OURS)
    changed = copy.deepcopy(ours)
    changed["messages"]["apache.rocketmq.v2.SystemProperties"]["16"]["number"] = 17
    del changed["enums"]["apache.rocketmq.v2.Code"]["TOPIC_NOT_FOUND"]
    assert differences(ours, changed) == [
        "/enums/apache.rocketmq.v2.Code/TOPIC_NOT_FOUND: only in rocketq's",
        "/messages/apache.rocketmq.v2.SystemProperties/16/number: rocketq 16 != client 17",
    ]
