"""The official 5.x Python client against rocketq's gRPC endpoint with TLS (a CA the test makes,
trusted through grpcio's ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``) and with plain ACL on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.proxy.config import ProxyConfig
from rocketq.testing.acl import ACCOUNTS, ADMIN, NORMAL, write_acl
from rocketq.testing.tls_ca import CaFiles, make_test_ca
from tests.interop.rmq5_env import Rmq5Env, rmq5_env
from tests.interop.rmq5_runner import needs_rmq5, of

pytestmark = [pytest.mark.interop, needs_rmq5, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CaFiles:
    return make_test_ca(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def tls_env(tmp_path_factory: pytest.TempPathFactory, ca: CaFiles) -> Iterator[Rmq5Env]:
    proxy = ProxyConfig(
        grpc_server_port=0, tls_cert_path=str(ca.server_cert), tls_key_path=str(ca.server_key)
    )
    with rmq5_env(tmp_path_factory.mktemp("rmq5-tls"), proxy) as running:
        yield running


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_tls_with_a_test_ca_sends_and_receives(tls_env: Rmq5Env, ca: CaFiles, host: str) -> None:
    name = host.replace(".", "-")
    topic, group = tls_env.topic(f"Rmq5Tls-{name}"), tls_env.group(f"tls-{name}")
    trust = {"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(ca.ca_cert)}
    endpoint = f"{host}:{tls_env.server.port}"
    args = ("--topic", topic, "--group", group, "--count", "2", "--tls")
    sent = tls_env.drive("send_only", *args, env=trust, endpoint=endpoint)
    assert [e["body"] for e in of(sent, "sent")] == ["five-0", "five-1"], sent
    got = tls_env.drive("receive_only", *args, env=trust, endpoint=endpoint)
    assert sorted(e["body"] for e in of(got, "received")) == ["five-0", "five-1"], got


def test_a_client_without_tls_is_refused_by_the_tls_port(tls_env: Rmq5Env) -> None:
    topic = tls_env.topic("Rmq5TlsPlain")
    events = tls_env.drive("send_only", "--topic", topic, "--count", "1", "--request-timeout", "2")
    assert not of(events, "sent")
    assert of(events, "refused") or of(events, "error"), events


def test_a_client_trusting_another_ca_is_refused(tls_env: Rmq5Env, ca: CaFiles) -> None:
    topic = tls_env.topic("Rmq5TlsOtherCa")
    trust = {"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": str(ca.other_ca_cert)}
    args = ("--topic", topic, "--count", "1", "--tls", "--request-timeout", "2")
    events = tls_env.drive("send_only", *args, env=trust)
    assert not of(events, "sent")
    assert of(events, "refused") or of(events, "error"), events


@pytest.fixture(scope="module")
def acl_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rmq5Env]:
    """aclEnable on the broker and on the endpoint, one plain_acl.yml (the endpoint signs its
    remoting requests with the file's admin account)."""
    root = tmp_path_factory.mktemp("rmq5-acl")
    acl_file = root / "plain_acl.yml"
    write_acl(acl_file, ACCOUNTS)
    manager = PlainPermissionManager(acl_file)
    manager.load()
    with rmq5_env(root, acl=manager, acl_enable=True, acl_file_path=str(acl_file)) as running:
        yield running


def test_a_wrong_secret_is_refused_with_acl_on(acl_env: Rmq5Env) -> None:
    topic = "Rmq5Acl"
    acl_env.admin(
        "updateTopic", "--ak", ADMIN[0], "--sk", ADMIN[1],
        "-b", acl_env.broker.broker_addr, "-t", topic, "-a", "+message.type=NORMAL",
    )  # fmt: skip
    right = ("--ak", NORMAL[0], "--sk", NORMAL[1])
    ok = acl_env.drive("send_only", "--topic", topic, "--count", "1", *right)
    assert [e["body"] for e in of(ok, "sent")] == ["five-0"], ok
    wrong = ("--ak", NORMAL[0], "--sk", "not-the-secret")
    refused = acl_env.drive("send_only", "--topic", topic, "--count", "1", *wrong)
    assert not of(refused, "sent"), refused
    assert of(refused, "refused") or of(refused, "error"), refused
