"""The ``authorization`` header of RocketMQ 5's gRPC clients, checked against plain ACL accounts.

Every RPC of the 5.x clients (rocketmq-clients' ``Signature``) carries::

    x-mq-date-time: 20261127T232100Z
    authorization:  MQv2-HMAC-SHA1 Credential=<AK>, SignedHeaders=x-mq-date-time, Signature=<hex>

with ``Signature = hex(HMAC-SHA1(secretKey, value of x-mq-date-time))``: lower-case hex from
the Python client, upper-case from Node. The Python client sends the header even without
credentials (``Credential=``), so its presence never means "wants ACL"; with ``aclEnable``
off nothing here runs.

Parsing follows RocketMQ's ``AuthorizationHeader``: split once on the first space (method,
rest); the rest on ``,``; each item trimmed and split on its first ``=`` (an item without one
is refused); the access key is ``Credential``'s first ``/`` part; ``Signature`` is hex-decoded
in either case. The datetime is only the signed content: no clock-skew check, as in Java (the
Python client writes local time marked ``Z``).

The check is the proxy's ``AuthenticationInterceptor`` with the plain validator (RocketMQ 5.0
to 5.3.2, ``aclEnable=true``), in ``PlainPermissionManager.validate``'s order: global white
list, access key present, account known, account white address, signature, then the
resources the request names (``PlainAccessResource.parse(GeneratedMessageV3, ...)``):

- HeartbeatRequest: the group SUB (when it has one);
- SendMessageRequest: the topic PUB (every message of one topic, else refused);
- ReceiveMessageRequest, AckMessageRequest, ForwardMessageToDeadLetterQueueRequest: the
  group SUB and the topic SUB;
- EndTransactionRequest: the topic PUB;
- TelemetryCommand with Settings: each publishing topic PUB; the subscription's group SUB
  and each subscribed topic SUB;
- any other request: a known account with a valid signature.

Groups are checked as their ``%RETRY%`` topic, as the remoting ACL does
(``rocketq.broker.acl.access_resource``), so an account's ``groupPerms`` apply to gRPC
consumers too (Java's gRPC path passes the bare group name, which then meets the topic
permissions). A refusal is the gRPC status PERMISSION_DENIED (:data:`REFUSAL_STATUS`), as
the interceptor's ``StatusRuntimeException(Status.PERMISSION_DENIED)``; no response body.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketq.broker.acl.access_resource import PlainAccessResource, remote_ip_of
from rocketq.broker.acl.permission import PUB, SUB
from rocketq.broker.acl.plain_acl_config import PlainAclConfig
from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager, check_perm
from rocketq.common.topic import RMQ_SYS_TRACE_TOPIC, retry_topic
from rocketq.errors import AclError, ConfigError

AUTHORIZATION = "authorization"
DATE_TIME = "x-mq-date-time"
SESSION_TOKEN = "x-mq-session-token"
ALGORITHM = "MQv2-HMAC-SHA1"
CREDENTIAL = "Credential"
SIGNED_HEADERS = "SignedHeaders"
SIGNATURE = "Signature"
NAMESPACE_SEPARATOR = "%"  # NamespaceUtil.wrapNamespace
# the name of grpc.StatusCode a refusal carries (this module does not import grpc)
REFUSAL_STATUS = "PERMISSION_DENIED"
# ACL 2.0 (RocketMQ 5.3's AuthConfig): not served here; plain ACL is aclEnable
ACL2_KEYS = ("authenticationEnabled", "authorizationEnabled")
# the proxy's request code for a gRPC request without a remoting twin (RequestMapping)
GRPC_REQUEST_CODE = 0

_PACKAGE = "apache.rocketmq.v2."


@dataclass(frozen=True, slots=True)
class AuthorizationHeader:
    """The parsed ``authorization`` value (RocketMQ's AuthorizationHeader)."""

    method: str
    access_key: str | None
    signed_headers: tuple[str, ...]
    signature: bytes | None

    @classmethod
    def parse(cls, header: str) -> AuthorizationHeader:
        """Parse as Java does; a malformed header raises AclError (Java's DecoderException)."""
        method, sep, rest = header.partition(" ")
        if not sep:
            raise AclError("authorization header is incorrect")
        access_key: str | None = None
        signed: tuple[str, ...] = ()
        signature: bytes | None = None
        for item in rest.split(","):
            key, eq, value = item.strip().partition("=")
            if not eq:
                raise AclError("authorization keyValues length is incorrect, actual length=1")
            if key == CREDENTIAL:
                access_key = value.split("/")[0]
            elif key == SIGNED_HEADERS:
                signed = tuple(value.split(";"))
            elif key == SIGNATURE:
                try:
                    signature = bytes.fromhex(value)
                except ValueError as exc:
                    raise AclError(f"authorization signature is not hex: {exc}") from exc
        return cls(method, access_key, signed, signature)


def sign(secret_key: str, date_time: str) -> str:
    """The client's signature: lower-case hex of HMAC-SHA1(secret, datetime)."""
    return hmac.new(secret_key.encode(), date_time.encode(), hashlib.sha1).hexdigest()


def authorization_value(access_key: str, secret_key: str, date_time: str) -> str:
    """The header value a 5.x client sends for these credentials at ``date_time``."""
    return (
        f"{ALGORITHM} {CREDENTIAL}={access_key}, {SIGNED_HEADERS}={DATE_TIME}, "
        f"{SIGNATURE}={sign(secret_key, date_time)}"
    )


def wrap_namespace(resource: Any) -> str:
    """A ``Resource`` message's name with its namespace (NamespaceUtil.wrapNamespace)."""
    namespace: str = resource.resource_namespace
    name: str = resource.name
    return f"{namespace}{NAMESPACE_SEPARATOR}{name}" if namespace else name


def _group(resource: Any) -> str:
    return retry_topic(wrap_namespace(resource))


def grpc_resources(message: Any) -> dict[str, int]:
    """What a request message asks for: resource name -> PUB or SUB (module docstring)."""
    name = message.DESCRIPTOR.full_name.removeprefix(_PACKAGE)
    wanted: dict[str, int] = {}
    if name == "HeartbeatRequest":
        if message.HasField("group"):
            wanted[_group(message.group)] = SUB
    elif name == "SendMessageRequest":
        if not message.messages:
            raise AclError("SendMessageRequest, messageCount is zero")
        topic = message.messages[0].topic
        if any(m.topic != topic for m in message.messages):
            raise AclError("SendMessageRequest, messages' topic is not consistent")
        wanted[wrap_namespace(topic)] = PUB
    elif name == "ReceiveMessageRequest":
        wanted[_group(message.group)] = SUB
        wanted[wrap_namespace(message.message_queue.topic)] = SUB
    elif name in ("AckMessageRequest", "ForwardMessageToDeadLetterQueueRequest"):
        wanted[_group(message.group)] = SUB
        wanted[wrap_namespace(message.topic)] = SUB
    elif name == "EndTransactionRequest":
        wanted[wrap_namespace(message.topic)] = PUB
    elif name == "TelemetryCommand" and message.WhichOneof("command") == "settings":
        _add_settings(wanted, message.settings)
    return {resource: perm for resource, perm in wanted.items() if resource}


def _add_settings(wanted: dict[str, int], settings: Any) -> None:
    if settings.HasField("publishing"):
        for topic in settings.publishing.topics:
            wanted[wrap_namespace(topic)] = PUB
    if settings.HasField("subscription"):
        subscription = settings.subscription
        wanted[_group(subscription.group)] = SUB
        for entry in subscription.subscriptions:
            wanted[wrap_namespace(entry.topic)] = SUB


class GrpcAccessValidator:
    """The plain ACL check of one gRPC request; reads the manager's current snapshot, so a
    ``plain_acl.yml`` reload applies to the next request."""

    def __init__(self, manager: PlainPermissionManager) -> None:
        self.manager = manager
        self.allowed_count = 0
        self.refused_count = 0

    def validate(self, metadata: Mapping[str, str], message: Any, remote_addr: str) -> str:
        """The access key the request was signed with; raises AclError (the reason) when the
        request may not run."""
        try:
            key = check_request(self.manager.config, metadata, message, remote_addr)
        except AclError:
            self.refused_count += 1
            raise
        self.allowed_count += 1
        return key


def check_request(
    config: PlainAclConfig, metadata: Mapping[str, str], message: Any, remote_addr: str
) -> str:
    """``PlainPermissionManager.validate`` for a gRPC request (module docstring); returns the
    access key ("" for a globally white-listed address)."""
    remote_ip = remote_ip_of(remote_addr)
    rpc = message.DESCRIPTOR.name
    if any(s.match(remote_ip) for s in config.global_white_strategies):
        return ""
    header = metadata.get(AUTHORIZATION)
    date_time = metadata.get(DATE_TIME)
    if header is None or date_time is None:
        raise AclError(f"{rpc} from {remote_ip} is not signed ({AUTHORIZATION}, {DATE_TIME})")
    parsed = AuthorizationHeader.parse(header)
    key = parsed.access_key
    if not key:
        raise AclError(f"No accessKey is configured: {rpc} from {remote_ip} is not signed")
    account = config.accounts.get(key)
    if account is None:
        raise AclError(f"No acl config for accessKey={key} ({rpc})")
    if account.remote_address_strategy.match(remote_ip):
        return key
    expected = hmac.new(account.secret_key.encode(), date_time.encode(), hashlib.sha1).digest()
    if parsed.signature is None or not hmac.compare_digest(expected, parsed.signature):
        raise AclError(f"Check signature failed for accessKey={key} ({rpc})")
    resource = PlainAccessResource(
        request_code=GRPC_REQUEST_CODE,
        remote_ip=remote_ip,
        access_key=key,
        signature=binascii.b2a_base64(parsed.signature, newline=False).decode(),
        security_token=metadata.get(SESSION_TOKEN),
        resource_perm_map=grpc_resources(message),
    )
    if resource.resource_perm_map.get(RMQ_SYS_TRACE_TOPIC) == PUB:
        return key
    check_perm(resource, account)
    return key


def refuse_acl2_keys(properties: Mapping[str, object], source: str) -> None:
    """ACL 2.0's switches set to true stop the start, in one line naming ``aclEnable``:
    rocketq serves plain ACL (RocketMQ up to 5.3.2), not RocketMQ 5.3's users and policies.
    ``properties`` is broker.conf's text values or rmq-proxy.json's JSON values."""
    for key in ACL2_KEYS:
        value = properties.get(key)
        if value is True or (isinstance(value, str) and value.strip().lower() == "true"):
            raise ConfigError(
                f"{source}: {key}=true (ACL 2.0) is not supported; "
                "use aclEnable=true with plain_acl.yml (plain ACL) instead"
            )
