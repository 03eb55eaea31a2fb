"""Request signing of RocketMQ ACL 1.0 (RocketMQ's AclClientRPCHook and AclUtils).

    data      = concat(values of extFields except "Signature", keys in UTF-16 order) + body
    Signature = base64(HMAC-SHA1(secretKey, data))

(``AclUtils.combineRequestContent`` sorts the fields in a TreeMap, ``AclUtils.calSignature``
signs.) Every request of the C++ client captured in ``tests/remoting/fixtures`` carries
``AccessKey``, ``OnsChannel`` and ``Signature``, signed with an empty secret when no credentials
are set (``tests/remoting/test_acl.py`` verifies each). Values are the text the codec keeps
(numbers in their decimal text, booleans lowercase), so received signatures verify as sent.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

from rocketq.remoting.protocol.command import RemotingCommand

ACCESS_KEY = "AccessKey"
SECRET_KEY = "SecretKey"
SIGNATURE = "Signature"
SECURITY_TOKEN = "SecurityToken"
ONS_CHANNEL = "OnsChannel"
UNIQUE_KEY_QUERY = "_UNIQUE_KEY_QUERY"


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", errors="surrogatepass")


def combine_request_content(
    ext_fields: Mapping[str, str], body: bytes, *, skip: frozenset[str] = frozenset()
) -> bytes:
    """The signed bytes: values in Java TreeMap key order (no Signature), then the body."""
    keys = sorted((k for k in ext_fields if k != SIGNATURE and k not in skip), key=_utf16_order)
    text = "".join(ext_fields[k] for k in keys)
    return text.encode("utf-8", errors="surrogatepass") + body


def calculate_signature(data: bytes, secret_key: str) -> str:
    digest = hmac.new(secret_key.encode(), data, hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def sign_request(
    cmd: RemotingCommand,
    access_key: str,
    secret_key: str,
    *,
    security_token: str | None = None,
) -> None:
    """AclClientRPCHook.doBeforeRequest: add AccessKey (and token), then Signature."""
    cmd.ext_fields[ACCESS_KEY] = access_key
    if security_token:
        cmd.ext_fields[SECURITY_TOKEN] = security_token
    data = combine_request_content(cmd.ext_fields, cmd.body)
    cmd.ext_fields[SIGNATURE] = calculate_signature(data, secret_key)


def verify_signature(cmd: RemotingCommand, secret_key: str) -> bool:
    """Check the request's Signature (with and without ``_UNIQUE_KEY_QUERY``, as 4.x/5.x do)."""
    received = cmd.ext_fields.get(SIGNATURE)
    if received is None:
        return False
    variants = [frozenset[str]()]
    if UNIQUE_KEY_QUERY in cmd.ext_fields:
        variants.append(frozenset({UNIQUE_KEY_QUERY}))
    for skip in variants:
        expected = calculate_signature(
            combine_request_content(cmd.ext_fields, cmd.body, skip=skip), secret_key
        )
        # a peer's text may hold anything, lone surrogates included: compare bytes
        if hmac.compare_digest(expected.encode(), received.encode("utf-8", "surrogatepass")):
            return True
    return False


class AclClientRPCHook:
    """An rpc hook for RemotingClient/BlockingRemotingClient that signs every request."""

    def __init__(self, access_key: str, secret_key: str, security_token: str | None = None) -> None:
        self.access_key = access_key
        self.secret_key = secret_key
        self.security_token = security_token

    def __call__(self, cmd: RemotingCommand) -> None:
        sign_request(cmd, self.access_key, self.secret_key, security_token=self.security_token)
