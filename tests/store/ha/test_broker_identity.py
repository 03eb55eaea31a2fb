"""brokerIdentity and brokerIdentity-temp: RocketMQ's text, atomic writes, the registration
steps repeated after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.errors import CorruptionError
from rocketq.store.ha.broker_identity import (
    BrokerMetadata,
    TempBrokerMetadata,
    broker_identity_path,
    promote_temp,
    read_broker_metadata,
    read_temp_broker_metadata,
    write_temp_broker_metadata,
)


def test_identity_text_is_rocketmqs() -> None:
    meta = BrokerMetadata("DefaultCluster", "broker-a", 1)
    assert meta.encode() == b"DefaultCluster#broker-a#1"
    assert BrokerMetadata.decode(b"DefaultCluster#broker-a#1") == meta
    temp = TempBrokerMetadata("DefaultCluster", "broker-a", 2, "127.0.0.1:30911;1700000000000")
    assert temp.encode() == b"DefaultCluster#broker-a#2#127.0.0.1:30911;1700000000000"
    assert TempBrokerMetadata.decode(temp.encode()) == temp


@pytest.mark.parametrize("data", [b"", b"c#b", b"c#b#x", b"c##1", b"c#b#1#code", b"\xff#b#1"])
def test_a_damaged_identity_is_corruption(data: bytes) -> None:
    with pytest.raises(CorruptionError):
        BrokerMetadata.decode(data)


def test_a_name_with_the_separator_is_refused() -> None:
    with pytest.raises(ValueError, match="#"):
        BrokerMetadata("c#1", "b", 1).encode()


def test_registration_files_survive_each_step(tmp_path: Path) -> None:
    path = broker_identity_path(str(tmp_path))
    assert path == str(tmp_path / "brokerIdentity")
    assert read_broker_metadata(path) is None
    temp = TempBrokerMetadata("c", "broker-a", 3, "h:1;5")
    write_temp_broker_metadata(path, temp)
    assert (tmp_path / "brokerIdentity-temp").read_bytes() == b"c#broker-a#3#h:1;5"
    assert read_temp_broker_metadata(path) == temp  # a restart here applies the id again
    assert promote_temp(path, temp) == BrokerMetadata("c", "broker-a", 3)
    assert (tmp_path / "brokerIdentity").read_bytes() == b"c#broker-a#3"
    assert read_temp_broker_metadata(path) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["brokerIdentity"]
