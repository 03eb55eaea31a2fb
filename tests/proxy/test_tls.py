"""TLS of the gRPC port (rocketq.proxy.tls) with a CA the test makes: a grpc.aio server on
127.0.0.1 port 0 with the credentials, and channels that trust the CA, another CA, or none."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from rocketq.errors import ConfigError
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as svc
from rocketq.proxy.protos import service_pb2_grpc
from rocketq.proxy.tls import server_credentials, tls_key_pair
from rocketq.testing.tls_ca import CaFiles, make_test_ca

pytestmark = pytest.mark.timeout(60)
CALL_TIMEOUT_S = 5.0


class RouteOnly(service_pb2_grpc.MessagingServiceServicer):
    async def QueryRoute(
        self, request: svc.QueryRouteRequest, context: grpc.aio.ServicerContext[object, object]
    ) -> svc.QueryRouteResponse:
        return svc.QueryRouteResponse(status=pb.Status(code=pb.OK, message=request.topic.name))


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CaFiles:
    return make_test_ca(tmp_path_factory.mktemp("ca"))


@pytest.fixture
async def tls_port(ca: CaFiles) -> AsyncIterator[int]:
    pair = tls_key_pair({"tlsCertPath": str(ca.server_cert), "tlsKeyPath": str(ca.server_key)})
    assert pair is not None
    server = grpc.aio.server()
    service_pb2_grpc.add_MessagingServiceServicer_to_server(RouteOnly(), server)
    port = server.add_secure_port("127.0.0.1:0", server_credentials(pair))
    await server.start()
    try:
        yield port
    finally:
        await server.stop(None)


async def query(channel: grpc.aio.Channel) -> str:
    stub = service_pb2_grpc.MessagingServiceStub(channel)
    request = svc.QueryRouteRequest(topic=pb.Resource(name="TopicTls"))
    response = await stub.QueryRoute(request, timeout=CALL_TIMEOUT_S)
    return str(response.status.message)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_client_trusting_the_ca_talks_tls(ca: CaFiles, tls_port: int, host: str) -> None:
    credentials = grpc.ssl_channel_credentials(ca.ca_cert.read_bytes())
    async with grpc.aio.secure_channel(f"{host}:{tls_port}", credentials) as channel:
        assert await query(channel) == "TopicTls"


async def test_the_tls_port_refuses_plaintext(tls_port: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{tls_port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await query(channel)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_a_client_trusting_another_ca_fails(ca: CaFiles, tls_port: int) -> None:
    credentials = grpc.ssl_channel_credentials(ca.other_ca_cert.read_bytes())
    async with grpc.aio.secure_channel(f"127.0.0.1:{tls_port}", credentials) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await query(channel)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE


def test_no_paths_means_plaintext() -> None:
    assert tls_key_pair({}) is None
    assert tls_key_pair({"tlsTestModeEnable": False, "tlsCertPath": ""}) is None


@pytest.mark.parametrize("value", [True, "true"])
def test_test_mode_is_refused(value: object) -> None:
    with pytest.raises(ConfigError, match="tlsTestModeEnable=true is not supported"):
        tls_key_pair({"tlsTestModeEnable": value})


def test_one_path_without_the_other_is_refused(ca: CaFiles) -> None:
    with pytest.raises(ConfigError, match="go together"):
        tls_key_pair({"tlsCertPath": str(ca.server_cert)})


def test_missing_or_swapped_files_are_refused(ca: CaFiles, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tlsCertPath .*nope.crt"):
        tls_key_pair({"tlsCertPath": str(tmp_path / "nope.crt"), "tlsKeyPath": str(ca.server_key)})
    swapped = {"tlsCertPath": str(ca.server_key), "tlsKeyPath": str(ca.server_cert)}
    with pytest.raises(ConfigError, match="no PEM certificate"):
        tls_key_pair(swapped)
