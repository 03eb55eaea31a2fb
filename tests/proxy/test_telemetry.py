"""Telemetry: the Settings echo and the transaction check relayed to the producer's stream."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.remoting.protocol.group_bodies import SubscriptionGroupConfig
from rocketq.remoting.protocol.retry_policy import CustomizedRetryPolicy, GroupRetryPolicy
from tests.proxy.endpoint import Stream, producer_settings, run_endpoint


async def test_a_producer_gets_the_real_body_limit_and_backoff(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("EchoT")
        stream = Stream(ep)
        echo = await stream.settings(producer_settings("EchoT"))
        assert echo.status.code == pb.OK
        assert echo.settings.publishing.max_body_size == 4 * 1024 * 1024
        assert echo.settings.publishing.validate_message_type
        assert echo.settings.backoff_policy.max_attempts == 3
        assert echo.settings.HasField("metric")
        assert not echo.settings.metric.on
        hb = await ep.stub.Heartbeat(
            spb.HeartbeatRequest(client_type=pb.PRODUCER), metadata=ep.metadata, timeout=10
        )
        assert hb.status.code == pb.OK
        stream.call.cancel()


async def test_a_consumer_gets_its_groups_fifo_flag_and_retry_policy(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("EchoT")
        ep.cluster.broker.subscription_group_manager.update_subscription_group_config(
            SubscriptionGroupConfig(
                group_name="GE",
                consume_message_orderly=True,
                retry_max_times=1,
                group_retry_policy=GroupRetryPolicy(
                    customized_retry_policy=CustomizedRetryPolicy(next=[1000])
                ),
            )
        )
        stream = Stream(ep)
        echo = await stream.settings(
            pb.Settings(
                client_type=pb.PUSH_CONSUMER,
                subscription=pb.Subscription(
                    group=pb.Resource(name="GE"),
                    subscriptions=[pb.SubscriptionEntry(topic=pb.Resource(name="EchoT"))],
                ),
            )
        )
        sub = echo.settings.subscription
        assert (sub.fifo, sub.receive_batch_size) == (True, 32)
        assert sub.long_polling_timeout.seconds == 20
        policy = echo.settings.backoff_policy
        assert policy.max_attempts == 2
        assert [d.seconds for d in policy.customized_backoff.next] == [1]
        stream.call.cancel()


async def test_settings_without_publishing_or_subscription_end_the_stream(
    tmp_path: Path,
) -> None:
    async with run_endpoint(tmp_path) as ep:
        stream = Stream(ep)
        await stream.outgoing.put(spb.TelemetryCommand(settings=pb.Settings()))
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            await asyncio.wait_for(stream.call.read(), 10)
        assert ended.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_an_open_half_message_is_checked_through_the_producers_stream(
    tmp_path: Path,
) -> None:
    fast_checks = {"transaction_time_out_ms": 500, "transaction_check_interval_ms": 500}
    async with run_endpoint(tmp_path, broker=fast_checks) as ep:
        await ep.create_topic("TxT", "TRANSACTION")
        stream = Stream(ep)
        assert (await stream.settings(producer_settings("TxT"))).status.code == pb.OK
        sent = await ep.send(ep.message("TxT", b"half", message_type=pb.TRANSACTION))
        assert sent.status.code == pb.OK, sent.status
        tid = sent.entries[0].transaction_id
        assert tid
        check = await asyncio.wait_for(stream.call.read(), 30)
        recover = check.recover_orphaned_transaction_command
        assert recover.transaction_id == tid
        assert recover.message.body == b"half"
        ended = await ep.stub.EndTransaction(
            spb.EndTransactionRequest(
                topic=pb.Resource(name="TxT"),
                message_id=recover.message.system_properties.message_id,
                transaction_id=tid,
                resolution=pb.COMMIT,
                source=pb.SOURCE_SERVER_CHECK,
            ),
            metadata=ep.metadata,
            timeout=10,
        )
        assert ended.status.code == pb.OK
        _, got = await ep.receive("GTx", "TxT", polling_s=5)
        assert [m.body for m in got] == [b"half"]
        stream.call.cancel()
