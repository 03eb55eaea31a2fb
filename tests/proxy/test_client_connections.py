"""Each gRPC client is its own producer and consumer on the brokers (ClientHeartbeatService),
and admin requests for it travel over its Telemetry stream (AdminCommandRelay)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin import admin as admin_cli
from rocketq.errors import BrokerResponseError
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.remoting.protocol.consumer_bodies import CMResult
from rocketq.response_code import ResponseCode
from rocketq.testing import run_broker
from rocketq.testing.wait import until
from rocketq.testing.wire import create_topic
from tests.proxy.endpoint import Endpoint, Stream, producer_settings, run_endpoint

V5_1_2 = 437  # MQVersion.Version.V5_1_2.ordinal()


def consumer_settings(group: str, topic: str) -> pb.Settings:
    return pb.Settings(
        client_type=pb.SIMPLE_CONSUMER,
        subscription=pb.Subscription(
            group=pb.Resource(name=group),
            subscriptions=[pb.SubscriptionEntry(topic=pb.Resource(name=topic))],
        ),
    )


def producer_ids(ep: Endpoint, group: str) -> set[str]:
    table = ep.cluster.broker.producer_manager.group_channel_table.get(group, {})
    return {info.client_id for info in table.values()}


async def test_grpc_clients_are_listed_with_their_id_address_language_and_version(
    tmp_path: Path,
) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("ConnT")
        ep.create_group("ConnG")
        node = dataclasses.replace(ep, client_id="node@1", language="HTTP", version="1.0.8")
        producer, consumer = Stream(ep), Stream(node)
        assert (await producer.settings(producer_settings("ConnT"))).status.code == pb.OK
        assert (await consumer.settings(consumer_settings("ConnG", "ConnT"))).status.code == pb.OK
        async with AsyncAdminClient(ep.cluster.addr) as admin:
            found = await admin.examine_producer_connection_info("ConnT", "ConnT")
            by_id = {c.client_id: c for c in found.connection_set}
            mine = by_id[ep.client_id]
            assert (mine.language, mine.version) == ("PYTHON", V5_1_2)
            assert mine.client_addr.startswith("127.0.0.1:")
            # the proxy's own entry (transaction checks) is on its remoting connection
            others = {c.client_addr for cid, c in by_id.items() if cid != ep.client_id}
            assert mine.client_addr not in others
            argv = ["producerConnection", "-n", ep.cluster.addr, "-g", "ConnT", "-t", "ConnT"]
            shown = await asyncio.to_thread(CliRunner().invoke, admin_cli, argv)
            assert shown.exit_code == 0, shown.output
            (row,) = [line for line in shown.output.splitlines() if ep.client_id in line]
            assert row.split()[1:] == [mine.client_addr, "PYTHON", str(V5_1_2)]
            conn = await admin.examine_consumer_connection_info("ConnG")
            (only,) = conn.connection_set
            assert (only.client_id, only.language, only.version) == ("node@1", "HTTP", 0)
            assert "ConnT" in conn.subscription_table
            await node.stub.NotifyClientTermination(
                spb.NotifyClientTerminationRequest(group=pb.Resource(name="ConnG")),
                metadata=node.metadata,
                timeout=10,
            )
            with pytest.raises(BrokerResponseError) as refused:
                await admin.examine_consumer_connection_info("ConnG")
            assert refused.value.code == ResponseCode.CONSUMER_NOT_ONLINE
        assert ep.client_id in producer_ids(ep, "ConnT")
        producer.call.cancel()
        consumer.call.cancel()


async def test_a_client_that_stops_heartbeating_leaves_the_brokers(tmp_path: Path) -> None:
    async with run_endpoint(
        tmp_path, channel_expired_timeout_ms=600, client_heartbeat_interval_ms=100
    ) as ep:
        await ep.create_topic("ExpT")
        stream = Stream(ep)
        await stream.settings(producer_settings("ExpT"))
        assert ep.client_id in producer_ids(ep, "ExpT")
        for _ in range(3):  # heartbeats keep it
            await ep.stub.Heartbeat(
                spb.HeartbeatRequest(client_type=pb.PRODUCER), metadata=ep.metadata, timeout=10
            )
            await asyncio.sleep(0.2)
            assert ep.client_id in producer_ids(ep, "ExpT")
        assert await until(lambda: ep.client_id not in producer_ids(ep, "ExpT"), 5.0)
        assert ep.client_id not in ep.server.service.clients.sessions
        stream.call.cancel()


async def test_client_heartbeats_skip_a_broker_gone_from_every_route(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A broker that left the routes is forgotten before the next round (cleanOfflineBroker),
    not heartbeaten for every client at each round for ever."""
    caplog.set_level(logging.WARNING, logger="rocketq.proxy.client_heartbeat")
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("GoneT")
        extra_cm = run_broker(tmp_path / "x", namesrv_addr=ep.cluster.addr, broker_name="broker-x")
        extra = await extra_cm.__aenter__()
        try:
            await create_topic([extra.broker_addr], "GoneT", 2)
            await extra.register_broker_all()
            backend = ep.server.service.backend
            await backend.refresh("GoneT")
            assert "broker-x" in backend.instance.broker_addr_table
            stream = Stream(ep)
            await stream.settings(producer_settings("GoneT"))
            table = extra.producer_manager.group_channel_table.get("GoneT", {})
            assert ep.client_id in {info.client_id for info in table.values()}
        finally:
            await extra_cm.__aexit__(None, None, None)  # stops and leaves the name server
        await backend.refresh("GoneT")
        await ep.server.service.client_activity.heartbeats.beat_all()
        assert set(backend.instance.broker_addr_table) == {ep.cluster.broker.config.broker_name}
        assert not [r for r in caplog.records if "client heartbeat to" in r.getMessage()]
        assert ep.client_id in producer_ids(ep, "GoneT")
        stream.call.cancel()


@contextlib.asynccontextmanager
async def answering(stream: Stream, *, answer: bool) -> AsyncIterator[list[spb.TelemetryCommand]]:
    """Read the commands the proxy pushes; answer stack-trace and verify commands (as the Node
    and Java clients do) or not (as the Python client)."""
    seen: list[spb.TelemetryCommand] = []

    async def loop() -> None:
        while isinstance(command := await stream.call.read(), spb.TelemetryCommand):
            seen.append(command)
            if not answer:
                continue
            if command.HasField("print_thread_stack_trace_command"):
                nonce = command.print_thread_stack_trace_command.nonce
                trace = spb.ThreadStackTrace(nonce=nonce, thread_stack_trace="main: waiting")
                await stream.outgoing.put(spb.TelemetryCommand(thread_stack_trace=trace))
            elif command.HasField("verify_message_command"):
                nonce = command.verify_message_command.nonce
                await stream.outgoing.put(
                    spb.TelemetryCommand(
                        status=pb.Status(code=pb.OK),
                        verify_message_result=spb.VerifyMessageResult(nonce=nonce),
                    )
                )

    task = asyncio.get_running_loop().create_task(loop())
    try:
        yield seen
    finally:
        stream.call.cancel()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def test_consumer_status_and_consume_directly_go_over_telemetry(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("AdmT")
        ep.create_group("AdmG")
        stream = Stream(ep)
        await stream.settings(consumer_settings("AdmG", "AdmT"))
        sent = await ep.send(ep.message("AdmT", b"check me"))
        msg_id = sent.entries[0].message_id
        await ep.cluster.dispatched()
        async with (
            answering(stream, answer=True) as seen,
            AsyncAdminClient(ep.cluster.addr) as admin,
        ):
            info = await admin.get_consumer_running_info("AdmG", ep.client_id, jstack=True)
            assert info.jstack == "main: waiting"
            assert [s.topic for s in info.subscription_set] == ["AdmT"]
            result = await admin.consume_message_directly("AdmG", ep.client_id, "AdmT", msg_id)
            assert result.consume_result is CMResult.CR_SUCCESS
            verify = [c for c in seen if c.HasField("verify_message_command")]
            assert verify[0].verify_message_command.message.body == b"check me"


async def test_a_client_that_never_answers_times_out_with_a_remark(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        ep.server.service.client_activity.admin_relay.timeout_s = 0.5
        await ep.create_topic("MuteT")
        ep.create_group("MuteG")
        stream = Stream(ep)
        await stream.settings(consumer_settings("MuteG", "MuteT"))
        sent = await ep.send(ep.message("MuteT", b"x"))
        await ep.cluster.dispatched()
        async with answering(stream, answer=False), AsyncAdminClient(ep.cluster.addr) as admin:
            with pytest.raises(BrokerResponseError, match="did not answer") as status:
                await asyncio.wait_for(
                    admin.get_consumer_running_info("MuteG", ep.client_id, jstack=True), 5
                )
            assert status.value.code == ResponseCode.SYSTEM_ERROR
            plain = await admin.get_consumer_running_info("MuteG", ep.client_id)
            assert plain.jstack is None
            with pytest.raises(BrokerResponseError, match="never answers") as direct:
                await asyncio.wait_for(
                    admin.consume_message_directly(
                        "MuteG", ep.client_id, "MuteT", sent.entries[0].message_id
                    ),
                    5,
                )
            assert direct.value.code == ResponseCode.CONSUME_MSG_TIMEOUT
