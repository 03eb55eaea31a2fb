"""BlockingFacade: the one way a blocking class is made from an asyncio one.

A facade holds its asyncio core in ``impl`` and runs it on the process's shared ``LoopThread``.
Each call is declared once, as the twin of the asyncio method it mirrors::

    class Producer(BlockingFacade[aio.Producer]):
        send = blocking_twin(aio.Producer.send)

``blocking_twin`` is a descriptor typed with the method's ``ParamSpec``: mypy and IDEs see the
asyncio parameters and the awaited result type, and the call goes through ``LoopThread.run``
(the fast path: calls queue and one wake-up starts a burst). ``start_twin`` and
``shutdown_twin`` mirror the lifecycle calls: they take the loop thread before the core
starts and give it back if starting fails, and after shutting down, so no facade can leak
the loop. A call whose blocking form differs (a listener run in the caller's thread, a
subscription before start) is written out by hand with the same signature;
``tests/client/test_blocking_twins.py`` checks every public async call of every facade's core
against its twin. ``not_mirrored`` names the core's async calls that are no user API (the
client instance calls them, as RocketMQ's ``MQConsumerInner``), each with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any, ClassVar, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from rocketq.client.loop_thread import LoopThread
from rocketq.errors import IllegalStateError

A = TypeVar("A")  # the asyncio class a facade mirrors
P = ParamSpec("P")
R = TypeVar("R")

AsyncCall = Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]


class BlockingFacade(Generic[A]):
    impl: A
    not_mirrored: ClassVar[Mapping[str, str]] = {}

    def __init__(self, impl: A) -> None:
        self.impl = impl
        self._loop: LoopThread | None = None

    @property
    def started(self) -> bool:
        return self._loop is not None

    @property
    def loop(self) -> LoopThread:
        if self._loop is None:
            raise IllegalStateError(f"the {type(self).__name__} is not started")
        return self._loop

    def _start(self, opening: Callable[[], Coroutine[Any, Any, object]] | None) -> None:
        """Take the loop thread, then run ``opening()`` on it; if that raises, give it back."""
        if self._loop is not None:
            raise IllegalStateError(f"the {type(self).__name__} is already started")
        loop = LoopThread.acquire()
        try:
            if opening is not None:
                loop.run(opening())
        except BaseException:
            LoopThread.release()
            raise
        self._loop = loop

    def _shutdown(self, closing: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """Run ``closing()`` on the loop thread, then give the loop thread back (always)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        try:
            loop.run(closing())
        finally:
            LoopThread.release()

    def start(self) -> None:
        raise NotImplementedError

    def shutdown(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()


class _Twin(Generic[P, R]):
    """The blocking twin of the asyncio method ``call``: same name, parameters and result."""

    def __init__(self, call: AsyncCall[P, R]) -> None:
        self.__wrapped__ = call
        self.__name__ = call.__name__
        self.__doc__ = call.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self.__name__:
            raise TypeError(f"{owner.__name__}.{name} mirrors {self.__name__}: names must match")

    @overload
    def __get__(self, facade: None, owner: type) -> Self: ...

    @overload
    def __get__(self, facade: BlockingFacade[Any], owner: type) -> Callable[P, R]: ...

    def __get__(self, facade: BlockingFacade[Any] | None, owner: type) -> Self | Callable[P, R]:
        if facade is None:
            return self
        return self._bind(facade)

    def _bind(self, facade: BlockingFacade[Any]) -> Callable[P, R]:
        name = self.__name__

        def twin(*args: P.args, **kwargs: P.kwargs) -> R:
            loop = facade.loop  # raises before a coroutine exists if not started
            coro: Coroutine[Any, Any, R] = getattr(facade.impl, name)(*args, **kwargs)
            return loop.run(coro)

        return twin


class _StartTwin(_Twin[P, None]):
    def _bind(self, facade: BlockingFacade[Any]) -> Callable[P, None]:
        name = self.__name__

        def twin(*args: P.args, **kwargs: P.kwargs) -> None:
            facade._start(lambda: getattr(facade.impl, name)(*args, **kwargs))

        return twin


class _ShutdownTwin(_Twin[P, None]):
    def _bind(self, facade: BlockingFacade[Any]) -> Callable[P, None]:
        name = self.__name__

        def twin(*args: P.args, **kwargs: P.kwargs) -> None:
            facade._shutdown(lambda: getattr(facade.impl, name)(*args, **kwargs))

        return twin


def blocking_twin(call: AsyncCall[P, R]) -> _Twin[P, R]:
    """The blocking form of the asyncio method ``call``: runs it on the loop thread."""
    return _Twin(call)


def start_twin(call: AsyncCall[P, None]) -> _StartTwin[P]:
    """The blocking ``start``: takes the loop thread, and gives it back if ``call`` raises."""
    return _StartTwin(call)


def shutdown_twin(call: AsyncCall[P, None]) -> _ShutdownTwin[P]:
    """The blocking ``shutdown``: runs ``call``, then gives the loop thread back."""
    return _ShutdownTwin(call)
