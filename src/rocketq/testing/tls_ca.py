"""A certificate authority made by a test: a CA, and a server certificate it signed for
127.0.0.1 and localhost (SAN), in PEM files, made with the ``openssl`` command line.

A 5.x client with TLS on trusts the CA through ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` (grpcio's
roots file) and checks the SAN against the host it dials; :func:`make_test_ca` gives what the
server and the client's environment need.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

DAYS = "2"
SAN = "subjectAltName=IP:127.0.0.1,DNS:localhost"


@dataclass(frozen=True, slots=True)
class CaFiles:
    ca_cert: Path
    server_cert: Path
    server_key: Path
    other_ca_cert: Path  # a second CA that signed nothing here: a client trusting it fails


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def _make_ca(root: Path, name: str) -> tuple[Path, Path]:
    cert, key = root / f"{name}.crt", root / f"{name}.key"
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", DAYS,
        "-subj", f"/CN=rocketq {name}", "-keyout", str(key), "-out", str(cert),
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    return cert, key


def make_test_ca(root: Path) -> CaFiles:
    """Write ca.crt, server.crt (CN=localhost, SAN IP:127.0.0.1 and DNS:localhost, signed by
    the CA) and server.key under ``root``, and other-ca.crt, an unrelated CA."""
    root.mkdir(parents=True, exist_ok=True)
    ca_cert, ca_key = _make_ca(root, "ca")
    other_ca, _ = _make_ca(root, "other-ca")
    key, csr, cert = root / "server.key", root / "server.csr", root / "server.crt"
    _openssl(
        "req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
        "-keyout", str(key), "-out", str(csr),
    )  # fmt: skip
    extensions = root / "server.ext"
    extensions.write_text(f"{SAN}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    _openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key),
        "-CAcreateserial", "-days", DAYS, "-extfile", str(extensions), "-out", str(cert),
    )  # fmt: skip
    return CaFiles(ca_cert, cert, key, other_ca)
