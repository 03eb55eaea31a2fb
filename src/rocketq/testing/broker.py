"""Start a name server and brokers in-process on 127.0.0.1, port 0, for tests."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator
from typing import Any

from rocketq.broker.config import BrokerConfig
from rocketq.broker.controller import BrokerController
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.server import NamesrvController, start_namesrv


@contextlib.asynccontextmanager
async def run_namesrv(
    port: int = 0, *, config: NamesrvConfig | None = None
) -> AsyncIterator[NamesrvController]:
    controller = await start_namesrv(port, config=config)
    try:
        yield controller
    finally:
        await controller.shutdown()


SMALL_INDEX = {"maxHashSlotNum": "5000", "maxIndexNum": "20000"}


@contextlib.asynccontextmanager
async def run_broker(
    store_root: str | os.PathLike[str],
    *,
    namesrv_addr: str | None = None,
    config: BrokerConfig | None = None,
    **overrides: Any,
) -> AsyncIterator[BrokerController]:
    """A broker on 127.0.0.1:<free port> with its store under ``store_root``.

    Index files default to 5,000 slots and 20,000 entries (420 KB instead of RocketMQ's
    420 MB, which every test broker would otherwise preallocate on disk).
    """
    base = config or BrokerConfig()
    overrides["store_properties"] = {
        **SMALL_INDEX,
        "haListenPort": "0",  # any free port: listenPort + 1 may be taken on a busy machine
        **base.store_properties,
        **overrides.get("store_properties", {}),
    }
    cfg = dataclasses.replace(
        base,
        listen_host="127.0.0.1",
        listen_port=overrides.pop("listen_port", 0),
        broker_ip1="127.0.0.1",
        namesrv_addr=namesrv_addr,
        store_path_root_dir=str(store_root),
        **overrides,
    )
    controller = BrokerController(cfg)
    await controller.start()
    try:
        yield controller
    finally:
        await controller.shutdown()
