"""The statuses of RocketMQ 5's gRPC answers (``apache.rocketmq.v2.Code``) and how broker
failures map onto them, as the Java proxy's ``ResponseBuilder`` and ``GrpcProxyException``.

Application errors travel inside a response's ``status`` (the gRPC status stays OK). An
activity raises :class:`ProxyError` with a code and a message; the service turns it into the
response's status. A broker's remoting code maps as ``ResponseBuilder.buildStatus`` does:
SUCCESS → OK, SYSTEM_BUSY → TOO_MANY_REQUESTS, REQUEST_CODE_NOT_SUPPORTED → NOT_IMPLEMENTED,
SUBSCRIPTION_GROUP_NOT_EXIST → CONSUMER_GROUP_NOT_FOUND, a timeout → PROXY_TIMEOUT, anything
else → INTERNAL_SERVER_ERROR. rocketq's broker refuses an ack or change of a handle that a
change replaced (NO_MESSAGE "receipt handle is expired"), which answers INVALID_RECEIPT_HANDLE,
the code on which the 5.x PushConsumer stops retrying.
"""

from __future__ import annotations

from rocketq.errors import BrokerResponseError, RemotingTimeoutError, RocketQError
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.response_code import ResponseCode

Code = pb.Code

_BROKER_CODES: dict[int, int] = {
    ResponseCode.SUCCESS: Code.OK,
    ResponseCode.SYSTEM_BUSY: Code.TOO_MANY_REQUESTS,
    ResponseCode.REQUEST_CODE_NOT_SUPPORTED: Code.NOT_IMPLEMENTED,
    ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: Code.CONSUMER_GROUP_NOT_FOUND,
    ResponseCode.TOPIC_NOT_EXIST: Code.TOPIC_NOT_FOUND,
    ResponseCode.NO_PERMISSION: Code.FORBIDDEN,
    ResponseCode.POLLING_FULL: Code.TOO_MANY_REQUESTS,
}


class ProxyError(RocketQError):
    """A request the proxy answers with a non-OK status (GrpcProxyException)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{Code.Name(code)}: {message}")
        self.code = code
        self.message = message


def status(code: int = Code.OK, message: str = "OK") -> pb.Status:
    return pb.Status(code=code, message=message)  # type: ignore[arg-type]


def status_of(exc: BaseException) -> pb.Status:
    """The status a failed activity answers (ResponseBuilder.buildStatus(Throwable))."""
    if isinstance(exc, ProxyError):
        return status(exc.code, exc.message)
    if isinstance(exc, BrokerResponseError):
        code = _BROKER_CODES.get(exc.response_code, Code.INTERNAL_SERVER_ERROR)
        if exc.response_code == ResponseCode.NO_MESSAGE and "expired" in exc.remark:
            code = Code.INVALID_RECEIPT_HANDLE  # our broker refuses a replaced handle
        return status(code, exc.remark or str(exc))
    if isinstance(exc, RemotingTimeoutError | TimeoutError):
        return status(Code.PROXY_TIMEOUT, str(exc) or "broker timeout")
    return status(Code.INTERNAL_SERVER_ERROR, str(exc) or type(exc).__name__)


def code_name(code: int) -> str:
    """The ``Code`` name of ``code`` (the response_code label of the rpc metrics)."""
    try:
        return Code.Name(code)
    except ValueError:
        return str(code)
