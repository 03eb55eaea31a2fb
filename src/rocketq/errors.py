"""The exception hierarchy: one root, families, and a response-code table.

Expected outcomes of the store are status enums inside result objects; exceptions
are for IO failure, corruption, bad configuration, remoting failure and broker
error responses.
"""

from __future__ import annotations

from typing import ClassVar


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

    code: ClassVar[int] = -1
    retriable: ClassVar[bool] = False

    def __init__(self, remark: str = "", *, code: int | None = None) -> None:
        super().__init__(remark or type(self).__name__)
        self.remark = remark
        if code is not None:
            self.response_code = code
        else:
            self.response_code = type(self).code


class SystemError_(BrokerResponseError):  # the trailing _ avoids shadowing the builtin
    code = 1
    retriable = True


class SystemBusyError(BrokerResponseError):
    code = 2
    retriable = True


class RequestCodeNotSupportedError(BrokerResponseError):
    code = 3


class FlushDiskTimeoutError(BrokerResponseError):
    code = 10
    retriable = True


class SlaveNotAvailableError(BrokerResponseError):
    code = 11
    retriable = True


class FlushSlaveTimeoutError(BrokerResponseError):
    code = 12
    retriable = True


class MessageIllegalError(BrokerResponseError):
    code = 13


class ServiceNotAvailableError(BrokerResponseError):
    code = 14
    retriable = True


class VersionNotSupportedError(BrokerResponseError):
    code = 15


class NoPermissionError(BrokerResponseError):
    code = 16


class TopicNotExistError(BrokerResponseError):
    code = 17


class SubscriptionParseFailedError(BrokerResponseError):
    code = 23


class SubscriptionNotExistError(BrokerResponseError):
    code = 24


class SubscriptionNotLatestError(BrokerResponseError):
    code = 25
    retriable = True


class SubscriptionGroupNotExistError(BrokerResponseError):
    code = 26


class FilterDataNotExistError(BrokerResponseError):
    code = 27


class FilterDataNotLatestError(BrokerResponseError):
    code = 28
    retriable = True


class TransactionShouldCommitError(BrokerResponseError):
    code = 200


class TransactionShouldRollbackError(BrokerResponseError):
    code = 201


class TransactionStateUnknowError(BrokerResponseError):
    code = 202


class TransactionStateGroupWrongError(BrokerResponseError):
    code = 203


class NoBuyerIdError(BrokerResponseError):
    code = 204


class NotInCurrentUnitError(BrokerResponseError):
    code = 205


class ConsumerNotOnlineError(BrokerResponseError):
    code = 206


class ConsumeMsgTimeoutError(BrokerResponseError):
    code = 207


class NoMessageError(BrokerResponseError):
    code = 208


def _subclasses(cls: type[BrokerResponseError]) -> list[type[BrokerResponseError]]:
    found: list[type[BrokerResponseError]] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_subclasses(sub))
    return found


RESPONSE_ERRORS: dict[int, type[BrokerResponseError]] = {
    cls.code: cls for cls in _subclasses(BrokerResponseError)
}


def for_code(code: int, remark: str = "") -> BrokerResponseError:
    """Build the error that a non-success response code stands for."""
    cls = RESPONSE_ERRORS.get(code, BrokerResponseError)
    return cls(remark, code=code)


class FilterExpressionError(RocketQError, ValueError):
    """A subscription expression (TAG or SQL92) does not parse (FilterAPI's "subString
    split error", RocketMQ's MQFilterException); the client raises it, the broker answers
    SUBSCRIPTION_PARSE_FAILED with its reason."""


# ---------------------------------------------------------------- Spark connector (issue 10)


class SparkOptionError(ConfigError):
    """A Spark source or sink option is unknown, malformed, or contradicts another (named)."""


class DataLossError(RocketQError):
    """Offsets a Spark read planned are gone (retention, a vanished queue); failOnDataLoss."""
