"""The exception hierarchy: one root, families, and a response-code table.

Expected outcomes of the store are status enums inside result objects; exceptions
are for IO failure, corruption, bad configuration, remoting failure and broker
error responses.
"""

from __future__ import annotations

from typing import ClassVar

from rocketq.response_code import ResponseCode


class RocketQError(Exception):
    """Root of every error rocketq raises."""


class ConfigError(RocketQError, ValueError):
    """A configuration value is missing, malformed or out of range."""


class IllegalStateError(RocketQError, RuntimeError):
    """An operation was called in a state that does not allow it."""


class StoreError(RocketQError, OSError):
    """The message store failed at an IO level."""


class StoreLockedError(StoreError):
    """Another process holds the store's lock file."""


class CorruptionError(StoreError):
    """Bytes on disk do not decode; carries the path, offset and reason."""

    def __init__(self, path: str, offset: int, reason: str) -> None:
        super().__init__(f"{path} at offset {offset}: {reason}")
        self.path = path
        self.offset = offset
        self.reason = reason


class DecodeError(RocketQError, ValueError):
    """Bytes do not decode as the expected layout (says where and why)."""

    def __init__(self, reason: str, offset: int = 0) -> None:
        super().__init__(f"offset {offset}: {reason}" if offset else reason)
        self.reason = reason
        self.offset = offset


class RemotingError(RocketQError):
    """A remoting failure: framing, connection or protocol."""


class RemotingCommandError(RemotingError, ValueError):
    """A peer sent a frame or header that does not parse."""


class RemotingConnectError(RemotingError, ConnectionError):
    """A connection could not be made or was lost."""


class RemotingTimeoutError(RemotingError, TimeoutError):
    """A request got no response in time."""


class RequestTimeoutError(RemotingTimeoutError):
    """No reply arrived for a request-reply ``Producer.request`` within its timeout."""


class RemotingTooMuchRequestError(RemotingError):
    """Too many requests are in flight on a connection."""


class ClientError(RocketQError):
    """A client-side failure that is not a broker response."""


class AclError(RocketQError):
    """A request failed the broker's access check (RocketMQ's AclException); the message
    names the account and the resource and becomes the NO_PERMISSION remark."""


class BrokerResponseError(RocketQError):
    """A broker or name server answered with a non-success response code."""

    code: ClassVar[ResponseCode | int] = -1  # a subclass names its ResponseCode
    retriable: ClassVar[bool] = False

    def __init__(self, remark: str = "", *, code: int | None = None) -> None:
        super().__init__(remark or type(self).__name__)
        self.remark = remark
        if code is not None:
            self.response_code = code
        else:
            self.response_code = type(self).code


class SystemError_(BrokerResponseError):  # the trailing _ avoids shadowing the builtin
    code = ResponseCode.SYSTEM_ERROR
    retriable = True


class SystemBusyError(BrokerResponseError):
    code = ResponseCode.SYSTEM_BUSY
    retriable = True


class RequestCodeNotSupportedError(BrokerResponseError):
    code = ResponseCode.REQUEST_CODE_NOT_SUPPORTED


class FlushDiskTimeoutError(BrokerResponseError):
    code = ResponseCode.FLUSH_DISK_TIMEOUT
    retriable = True


class SlaveNotAvailableError(BrokerResponseError):
    code = ResponseCode.SLAVE_NOT_AVAILABLE
    retriable = True


class FlushSlaveTimeoutError(BrokerResponseError):
    code = ResponseCode.FLUSH_SLAVE_TIMEOUT
    retriable = True


class MessageIllegalError(BrokerResponseError):
    code = ResponseCode.MESSAGE_ILLEGAL


class ServiceNotAvailableError(BrokerResponseError):
    code = ResponseCode.SERVICE_NOT_AVAILABLE
    retriable = True


class VersionNotSupportedError(BrokerResponseError):
    code = ResponseCode.VERSION_NOT_SUPPORTED


class NoPermissionError(BrokerResponseError):
    code = ResponseCode.NO_PERMISSION


class TopicNotExistError(BrokerResponseError):
    code = ResponseCode.TOPIC_NOT_EXIST


class SubscriptionParseFailedError(BrokerResponseError):
    code = ResponseCode.SUBSCRIPTION_PARSE_FAILED


class SubscriptionNotExistError(BrokerResponseError):
    code = ResponseCode.SUBSCRIPTION_NOT_EXIST


class SubscriptionNotLatestError(BrokerResponseError):
    code = ResponseCode.SUBSCRIPTION_NOT_LATEST
    retriable = True


class SubscriptionGroupNotExistError(BrokerResponseError):
    code = ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST


class FilterDataNotExistError(BrokerResponseError):
    code = ResponseCode.FILTER_DATA_NOT_EXIST


class FilterDataNotLatestError(BrokerResponseError):
    code = ResponseCode.FILTER_DATA_NOT_LATEST
    retriable = True


class TransactionShouldCommitError(BrokerResponseError):
    code = ResponseCode.TRANSACTION_SHOULD_COMMIT


class TransactionShouldRollbackError(BrokerResponseError):
    code = ResponseCode.TRANSACTION_SHOULD_ROLLBACK


class TransactionStateUnknowError(BrokerResponseError):
    code = ResponseCode.TRANSACTION_STATE_UNKNOW


class TransactionStateGroupWrongError(BrokerResponseError):
    code = ResponseCode.TRANSACTION_STATE_GROUP_WRONG


class NoBuyerIdError(BrokerResponseError):
    code = ResponseCode.NO_BUYER_ID


class NotInCurrentUnitError(BrokerResponseError):
    code = ResponseCode.NOT_IN_CURRENT_UNIT


class ConsumerNotOnlineError(BrokerResponseError):
    code = ResponseCode.CONSUMER_NOT_ONLINE


class ConsumeMsgTimeoutError(BrokerResponseError):
    code = ResponseCode.CONSUME_MSG_TIMEOUT


class NoMessageError(BrokerResponseError):
    code = ResponseCode.NO_MESSAGE


def _subclasses(cls: type[BrokerResponseError]) -> list[type[BrokerResponseError]]:
    found: list[type[BrokerResponseError]] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


RESPONSE_ERRORS: dict[ResponseCode, type[BrokerResponseError]] = {
    ResponseCode(cls.code): cls for cls in _subclasses(BrokerResponseError)
}

_KNOWN_CODES = frozenset(ResponseCode)


def for_code(code: int, remark: str = "") -> BrokerResponseError:
    """Build the error that a non-success response code stands for."""
    cls = BrokerResponseError
    if code in _KNOWN_CODES:
        cls = RESPONSE_ERRORS.get(ResponseCode(code), BrokerResponseError)
    return cls(remark, code=code)


def describe(exc: BaseException) -> str:
    """One line for a person: a response's RocketMQ code name and remark
    (``TOPIC_NOT_EXIST: No topic route info ...``), else the error's own message; never a
    Python class name, never "None"."""
    if isinstance(exc, BrokerResponseError):
        code = exc.response_code
        name = ResponseCode(code).name if code in _KNOWN_CODES else f"response code {code}"
        remark = _one_line(exc.remark)
        return f"{name}: {remark}" if remark else f"{name} (the server gave no reason)"
    return _one_line(str(exc)) or "failed without a reason"


def _one_line(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").splitlines()]
    return " ".join(line for line in lines if line and line not in ("None", "null"))


class FilterExpressionError(RocketQError, ValueError):
    """A subscription expression (TAG or SQL92) does not parse (FilterAPI's "subString
    split error", RocketMQ's MQFilterException); the client raises it, the broker answers
    SUBSCRIPTION_PARSE_FAILED with its reason."""


# ---------------------------------------------------------------- Spark connector (issue 10)


class SparkOptionError(ConfigError):
    """A Spark source or sink option is unknown, malformed, or contradicts another (named)."""


class DataLossError(RocketQError):
    """Offsets a Spark read planned are gone (retention, a vanished queue); failOnDataLoss."""
