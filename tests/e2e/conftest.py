"""Fixtures: a name server and a broker in-process on 127.0.0.1 port 0, and a raw client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rocketq.broker import BrokerController
from rocketq.namesrv import NamesrvController
from rocketq.remoting.client import RemotingClient
from rocketq.testing import run_broker, run_namesrv

SMALL_STORE = {
    "mapedFileSizeCommitLog": str(8 * 1024 * 1024),
    "mapedFileSizeConsumeQueue": str(6000),
}


@dataclass
class Cluster:
    namesrv: NamesrvController
    broker: BrokerController
    client: RemotingClient
    store_root: Path

    @property
    def broker_addr(self) -> str:
        return self.broker.broker_addr


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "store", namesrv_addr=ns.addr, store_properties=dict(SMALL_STORE)
        ) as broker,
        RemotingClient() as client,
    ):
        yield Cluster(ns, broker, client, tmp_path / "store")
