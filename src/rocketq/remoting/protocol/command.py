"""RemotingCommand: one request or response on a remoting connection (RocketMQ's
RemotingCommand).

flag bits (``RemotingCommand.RPC_TYPE``, ``RPC_ONEWAY``)::

    bit 0  RPC_TYPE    0x1  set on responses
    bit 1  RPC_ONEWAY  0x2  the requester wants no response

``opaque`` is an int32 request id from a process-wide counter that starts at 0 and wraps to
negative like Java's ``AtomicInteger``; a response carries its request's opaque unchanged.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

from rocketq.remoting.protocol.codes import CURRENT_VERSION, LanguageCode, SerializeType

RPC_TYPE = 0x1
RPC_ONEWAY = 0x2

_INT32_SPAN = 1 << 32
_INT32_HALF = 1 << 31

_opaque_counter = itertools.count()
_opaque_lock = threading.Lock()


def next_opaque() -> int:
    """The next request id of this process, as a wrapping signed int32."""
    with _opaque_lock:
        value = next(_opaque_counter)
    return ((value + _INT32_HALF) % _INT32_SPAN) - _INT32_HALF


@dataclass(slots=True)
class RemotingCommand:
    """A request or response: the JSON/binary header fields plus the body bytes."""

    code: int
    language: LanguageCode = LanguageCode.JAVA
    version: int = CURRENT_VERSION
    opaque: int = 0
    flag: int = 0
    remark: str | None = None
    ext_fields: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    serialize_type: SerializeType = SerializeType.JSON

    @property
    def is_response(self) -> bool:
        return bool(self.flag & RPC_TYPE)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & RPC_ONEWAY)

    def mark_response_type(self) -> None:
        self.flag |= RPC_TYPE

    def mark_oneway_rpc(self) -> None:
        self.flag |= RPC_ONEWAY

    @classmethod
    def create_request(
        cls,
        code: int,
        ext_fields: dict[str, str] | None = None,
        body: bytes = b"",
    ) -> RemotingCommand:
        """A new request with a fresh opaque."""
        return cls(
            code=int(code),
            opaque=next_opaque(),
            ext_fields=dict(ext_fields) if ext_fields else {},
            body=body,
        )

    @classmethod
    def create_response(
        cls,
        code: int,
        remark: str | None = None,
        *,
        ext_fields: dict[str, str] | None = None,
        body: bytes = b"",
    ) -> RemotingCommand:
        """A response; the server copies the request's opaque and serialize type onto it."""
        return cls(
            code=int(code),
            flag=RPC_TYPE,
            remark=remark,
            ext_fields=dict(ext_fields) if ext_fields else {},
            body=body,
        )

    def response_to(self, request: RemotingCommand) -> RemotingCommand:
        """Make this command the response of ``request`` (opaque, type bit, serialize type)."""
        self.opaque = request.opaque
        self.flag |= RPC_TYPE
        self.serialize_type = request.serialize_type
        return self


def create_request_command(
    code: int, ext_fields: dict[str, str] | None = None, body: bytes = b""
) -> RemotingCommand:
    """RocketMQ's ``RemotingCommand.createRequestCommand``."""
    return RemotingCommand.create_request(code, ext_fields, body)


def create_response_command(
    code: int, remark: str | None = None, *, ext_fields: dict[str, str] | None = None
) -> RemotingCommand:
    """RocketMQ's ``RemotingCommand.createResponseCommand``."""
    return RemotingCommand.create_response(code, remark, ext_fields=ext_fields)


def mark_response_type(cmd: RemotingCommand) -> None:
    cmd.mark_response_type()


def mark_oneway_rpc(cmd: RemotingCommand) -> None:
    cmd.mark_oneway_rpc()
