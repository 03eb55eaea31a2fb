"""What the gRPC endpoint refuses, with the status codes of Java's proxy."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.testing.acl import ACCOUNTS, ADMIN
from tests.proxy.endpoint import run_endpoint


async def test_unknown_topic_is_topic_not_found_for_route_and_send(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        route = await ep.stub.QueryRoute(
            spb.QueryRouteRequest(topic=pb.Resource(name="NoSuchT"), endpoints=ep.endpoints),
            metadata=ep.metadata,
        )
        assert route.status.code == pb.TOPIC_NOT_FOUND
        sent = await ep.send(ep.message("NoSuchT", b"x"))
        assert sent.status.code == pb.TOPIC_NOT_FOUND


async def test_a_type_the_topic_does_not_take_is_refused(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("FifoOnlyT", "FIFO")
        sent = await ep.send(ep.message("FifoOnlyT", b"normal"))
        assert sent.status.code == pb.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE
        assert "FIFO" in sent.status.message
        fifo = await ep.send(ep.message("FifoOnlyT", b"fifo", message_group="g"))
        assert fifo.status.code == pb.OK


async def test_the_type_check_can_be_turned_off(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path, enable_topic_message_type_check=False) as ep:
        await ep.create_topic("FifoOnlyT", "FIFO")
        assert (await ep.send(ep.message("FifoOnlyT", b"normal"))).status.code == pb.OK


async def test_a_request_without_client_id_is_refused(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("NoIdT")
        response = await ep.stub.SendMessage(
            spb.SendMessageRequest(messages=[ep.message("NoIdT", b"x")]), timeout=10
        )
        assert response.status.code == pb.CLIENT_ID_REQUIRED


async def test_bodies_over_the_limits_are_refused(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path, grpc_max_inbound_message_size_bytes=6 * 1024 * 1024) as ep:
        await ep.create_topic("BigT")
        too_big = await ep.send(ep.message("BigT", b"x" * (4 * 1024 * 1024 + 1)))
        assert too_big.status.code == pb.MESSAGE_BODY_TOO_LARGE
        empty = await ep.send(ep.message("BigT", b""))
        assert empty.status.code == pb.MESSAGE_BODY_EMPTY
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await ep.send(ep.message("BigT", b"x" * (7 * 1024 * 1024)))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_a_message_without_id_or_with_a_system_property_name_is_refused(
    tmp_path: Path,
) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("IdT")
        no_id = await ep.send(ep.message("IdT", b"x", message_id=""))
        assert no_id.status.code == pb.ILLEGAL_MESSAGE_ID
        reserved = ep.message("IdT", b"x")
        reserved.user_properties["UNIQ_KEY"] = "mine"
        assert (await ep.send(reserved)).status.code == pb.ILLEGAL_MESSAGE_PROPERTY_KEY


async def test_the_offset_rpcs_are_unimplemented_as_in_java(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        call = ep.stub.GetOffset(spb.GetOffsetRequest(), metadata=ep.metadata, timeout=10)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED


async def test_heartbeat_before_settings_is_an_unrecognized_client(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        response = await ep.stub.Heartbeat(
            spb.HeartbeatRequest(client_type=pb.PRODUCER), metadata=ep.metadata, timeout=10
        )
        assert response.status.code == pb.UNRECOGNIZED_CLIENT_TYPE


async def test_with_acl_a_wrong_secret_is_refused_and_the_right_one_sends(
    tmp_path: Path,
) -> None:
    async with run_endpoint(tmp_path, acl=ACCOUNTS) as ep:
        await ep.create_topic("AclT")
        request = spb.SendMessageRequest(messages=[ep.message("AclT", b"signed")])
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await ep.stub.SendMessage(request, metadata=ep.signed(ADMIN[0], "wrong"), timeout=10)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(grpc.aio.AioRpcError) as unsigned:
            await ep.stub.SendMessage(request, metadata=ep.metadata, timeout=10)
        assert unsigned.value.code() == grpc.StatusCode.PERMISSION_DENIED
        sent = await ep.stub.SendMessage(request, metadata=ep.signed(*ADMIN), timeout=10)
        assert sent.status.code == pb.OK, sent.status
