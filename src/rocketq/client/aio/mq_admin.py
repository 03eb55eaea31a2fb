"""MQAdmin: the message queries RocketMQ's producers, consumers and admin client offer
(``MQAdmin``, implemented once by ``MQAdminImpl``).

Each call is ``MQAdminImpl``'s method of the same name, run on the object's connections: the
client instance's for the asyncio Producer, PushConsumer and LitePullConsumer (so the client
must be started), the admin client's own for ``AsyncAdminClient``. The signatures are written
once, in ``MQAdminImpl``; ``ImplCall`` forwards them with their types.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from rocketq.client.aio.mq_admin_impl import MQAdminImpl
from rocketq.errors import IllegalStateError

P = ParamSpec("P")
R = TypeVar("R")


class ImplCall(Generic[P, R]):
    """An MQAdmin call: ``MQAdminImpl``'s method of the same name on the object's connections."""

    def __init__(self, call: Callable[Concatenate[MQAdminImpl, P], Coroutine[Any, Any, R]]) -> None:
        self.__wrapped__ = call
        self.__name__ = call.__name__
        self.__doc__ = call.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self.__name__:
            raise TypeError(f"{owner.__name__}.{name} forwards {self.__name__}: names must match")

    @overload
    def __get__(self, admin: None, owner: type) -> Self: ...

    @overload
    def __get__(self, admin: MQAdmin, owner: type) -> Callable[P, Coroutine[Any, Any, R]]: ...

    def __get__(
        self, admin: MQAdmin | None, owner: type
    ) -> Self | Callable[P, Coroutine[Any, Any, R]]:
        if admin is None:
            return self
        return functools.partial(self.__wrapped__, admin._mq_admin_impl())


class MQAdmin:
    _instance: Any

    def _mq_admin_impl(self) -> MQAdminImpl:
        instance = self._instance
        if instance is None:
            raise IllegalStateError(f"the {type(self).__name__} is not started")
        return MQAdminImpl(instance.remoting, instance.config.request_timeout_s)

    view_message = ImplCall(MQAdminImpl.view_message)
    query_message = ImplCall(MQAdminImpl.query_message)
    query_message_by_uniq_key = ImplCall(MQAdminImpl.query_message_by_uniq_key)
    search_offset = ImplCall(MQAdminImpl.search_offset)
    max_offset = ImplCall(MQAdminImpl.max_offset)
    min_offset = ImplCall(MQAdminImpl.min_offset)
    earliest_msg_store_time = ImplCall(MQAdminImpl.earliest_msg_store_time)
