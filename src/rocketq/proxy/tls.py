"""TLS of the gRPC port, from rmq-proxy.json's ``tlsCertPath`` / ``tlsKeyPath``.

Plaintext is the default, as the Python and Node clients' is (their ``tls_enable`` /
``sslEnabled`` are off unless set). With both paths set the port is **TLS only**, Java's
``tlsMode`` ENFORCING: grpcio's server cannot serve TLS and plaintext on one port, which
Java's PERMISSIVE mode does by sniffing the first bytes (``ProxyAndTlsProtocolNegotiator``).
The Java and Go clients turn TLS on by default, so against a plaintext rocketq they must turn
it off (README.md, "RocketMQ 5 clients").

A client with TLS on verifies the chain and the host name: the certificate must come from a
CA the client trusts (for the Python client: grpcio's roots, or the file named by
``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``) and carry a SAN for the host it dials. That is also why
``tlsTestModeEnable`` (Java's ProxyConfig; Java makes a self-signed certificate at start) is
refused: the Python client rejects such a certificate. Java's default for it is true; here an
absent key means false, and an explicit true stops the start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocketq.errors import ConfigError

if TYPE_CHECKING:
    import grpc

TLS_CERT_PATH = "tlsCertPath"
TLS_KEY_PATH = "tlsKeyPath"
TLS_TEST_MODE_ENABLE = "tlsTestModeEnable"
PEM_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"
PEM_KEY_MARKERS = (
    b"-----BEGIN PRIVATE KEY-----",
    b"-----BEGIN RSA PRIVATE KEY-----",
    b"-----BEGIN EC PRIVATE KEY-----",
)


@dataclass(frozen=True, slots=True)
class TlsKeyPair:
    """The PEM bytes of the server's certificate chain and its private key."""

    cert_path: Path
    key_path: Path
    certificate_chain: bytes
    private_key: bytes


def tls_key_pair(config: Mapping[str, object]) -> TlsKeyPair | None:
    """The key pair rmq-proxy.json names, or None for plaintext; raises ConfigError (naming
    the key and the file) for ``tlsTestModeEnable=true``, one path without the other, or a
    file that is missing or not PEM."""
    if _is_true(config.get(TLS_TEST_MODE_ENABLE)):
        raise ConfigError(
            f"{TLS_TEST_MODE_ENABLE}=true is not supported: the 5.x Python client rejects a "
            f"self-signed certificate; set {TLS_CERT_PATH} and {TLS_KEY_PATH} (a CA-signed "
            "certificate with a SAN for the address clients dial), or neither for plaintext"
        )
    cert, key = config.get(TLS_CERT_PATH), config.get(TLS_KEY_PATH)
    if not cert and not key:
        return None
    if not (isinstance(cert, str) and cert and isinstance(key, str) and key):
        raise ConfigError(f"{TLS_CERT_PATH} and {TLS_KEY_PATH} go together: set both or neither")
    cert_path, key_path = Path(cert), Path(key)
    chain = _read_pem(TLS_CERT_PATH, cert_path)
    private = _read_pem(TLS_KEY_PATH, key_path)
    if PEM_CERTIFICATE not in chain:
        raise ConfigError(f"{TLS_CERT_PATH} {cert_path}: no PEM certificate in it")
    if not any(marker in private for marker in PEM_KEY_MARKERS):
        raise ConfigError(f"{TLS_KEY_PATH} {key_path}: no PEM private key in it")
    return TlsKeyPair(cert_path, key_path, chain, private)


def server_credentials(pair: TlsKeyPair) -> grpc.ServerCredentials:
    """grpcio's credentials for ``server.add_secure_port``: no client certificates asked
    for, as Java's default (``tls.server.need.client.auth=none``)."""
    import grpc  # the grpc extra: only a TLS port needs it here

    return grpc.ssl_server_credentials([(pair.private_key, pair.certificate_chain)])


def _read_pem(key: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{key} {path}: {exc.strerror or exc}") from exc


def _is_true(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")
