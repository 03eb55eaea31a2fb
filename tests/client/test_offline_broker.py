"""A broker that stops, then restarts on a new port: the client forgets its old address at the
next heartbeat round (MQClientInstance.cleanOfflineBroker) and heartbeats the new one; a real
name server and brokers on port 0."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import pytest

from rocketq.client import Message, SendStatus
from rocketq.client.aio import Producer
from rocketq.common.message import MessageQueue
from rocketq.testing import run_broker, run_namesrv
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import create_topic

pytestmark = pytest.mark.timeout(30)

POLL_S = 30.0  # the timers never fire here: the test runs each round itself


async def test_a_restarted_brokers_old_address_is_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="rocketq.client.aio.instance")
    props = small_store_properties()
    async with (
        run_namesrv() as ns,
        run_broker(
            tmp_path / "b", namesrv_addr=ns.addr, broker_name="broker-b", store_properties=props
        ) as broker_b,
    ):
        broker_a_cm = run_broker(
            tmp_path / "a", namesrv_addr=ns.addr, broker_name="broker-a", store_properties=props
        )
        broker_a = await broker_a_cm.__aenter__()
        old_addr = broker_a.broker_addr
        await create_topic([old_addr, broker_b.broker_addr], "Moved", 2)
        for broker in (broker_a, broker_b):
            await broker.register_broker_all()
        producer = Producer(
            "pg",
            namesrv_addr=ns.addr,
            poll_name_server_interval_s=POLL_S,
            heartbeat_broker_interval_s=POLL_S,
        )
        await producer.start()
        instance = producer.instance
        try:
            sent = await producer.send(
                Message("Moved", b"x"), message_queue=MessageQueue("Moved", "broker-a", 0)
            )
            assert sent.status is SendStatus.SEND_OK
            assert instance.broker_addr_table["broker-a"] == {0: old_addr}

            await broker_a_cm.__aexit__(None, None, None)  # stops and leaves the name server
            await instance.update_all_routes()  # the route names broker-b only
            await instance.send_heartbeat_to_all()
            assert instance.broker_addr_table == {"broker-b": {0: broker_b.broker_addr}}
            assert not [r for r in caplog.records if "heartbeat to" in r.getMessage()]

            broker_a_cm = run_broker(
                tmp_path / "a", namesrv_addr=ns.addr, broker_name="broker-a", store_properties=props
            )
            broker_a = await broker_a_cm.__aenter__()  # the same store, a new port
            new_addr = broker_a.broker_addr
            assert new_addr != old_addr
            await broker_a.register_broker_all()
            await instance.update_all_routes()
            assert broker_a.producer_manager.get_available_channel("pg") is None
            await instance.send_heartbeat_to_all()
            assert instance.broker_addr_table["broker-a"] == {0: new_addr}
            assert instance.all_broker_addrs() == sorted([new_addr, broker_b.broker_addr])
            # the heartbeat reached the restarted broker, and nothing was sent to the old port
            assert broker_a.producer_manager.get_available_channel("pg") is not None
            assert not [r for r in caplog.records if "heartbeat to" in r.getMessage()]
        finally:
            await producer.shutdown()
            with contextlib.suppress(Exception):
                await broker_a_cm.__aexit__(None, None, None)
