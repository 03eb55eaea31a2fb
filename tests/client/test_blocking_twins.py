"""Every public async call of an asyncio client has a blocking twin with the same signature.

The facades are found by importing every module of ``rocketq.client`` and ``rocketq.admin``
and taking each ``BlockingFacade`` subclass; the calls of a facade's core are found by looking
at the class, so a new async method (or a new facade) is checked the day it lands. A call is
mirrored unless the facade's ``not_mirrored`` names it (with the reason).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import typing
from collections.abc import Iterator
from typing import Any

import pytest

import rocketq.admin
import rocketq.client
from rocketq.admin.client import AsyncAdminClient
from rocketq.client import aio
from rocketq.client.aio.mq_admin import MQAdmin
from rocketq.client.aio.mq_admin_impl import MQAdminImpl
from rocketq.client.blocking_facade import BlockingFacade

# asyncio classes that are no user client, so have no blocking facade
NO_FACADE = {"MQClientInstance": "the instance every client of one client id shares"}


def _import_all() -> None:
    for package in (rocketq.client, rocketq.admin):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(module.name)


def _subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def facades() -> list[type[BlockingFacade[Any]]]:
    _import_all()
    found = {c for c in _subclasses(BlockingFacade) if c.__module__.startswith("rocketq.")}
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


def core_of(facade: type) -> type:
    """The ``A`` of the nearest ``BlockingFacade[A]`` among the facade's bases."""
    for cls in facade.__mro__:
        for base in getattr(cls, "__orig_bases__", ()):
            if typing.get_origin(base) is BlockingFacade:
                core: type = typing.get_args(base)[0]
                return core
    raise AssertionError(f"{facade.__qualname__} does not say which asyncio class it mirrors")


def _signature(func: Any) -> inspect.Signature:
    """``func``'s signature without ``self``, annotations resolved where they can be."""
    try:
        sig = inspect.signature(func, eval_str=True)
    except NameError:  # an annotation imported only for type checking: compare the text
        sig = inspect.signature(func)
    return sig.replace(parameters=list(sig.parameters.values())[1:])


def async_calls(core: type) -> dict[str, inspect.Signature]:
    """The public coroutine methods of ``core``, forwarded ones (``MQAdmin``'s) included."""
    calls = {}
    for name in dir(core):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(core, name)
        func = getattr(attr, "__wrapped__", attr)
        if inspect.iscoroutinefunction(func):
            calls[name] = _signature(func)
    return calls


def twin_signature(facade: type, name: str) -> inspect.Signature | None:
    attr = inspect.getattr_static(facade, name, None)
    if attr is None:
        return None
    return _signature(getattr(attr, "__wrapped__", attr))


def twin_problems(facade: type) -> list[str]:
    core = core_of(facade)
    calls = async_calls(core)
    skipped = dict(facade.not_mirrored)  # type: ignore[attr-defined]
    where = f"{facade.__qualname__} (twin of {core.__module__}.{core.__qualname__})"
    stale = [name for name in skipped if name not in calls]
    problems = [f"{where}: not_mirrored names {name}, no async call" for name in stale]
    for name, expected in sorted(calls.items()):
        twin = twin_signature(facade, name)
        if name in skipped:
            if twin is not None:
                problems.append(f"{where}.{name}: has a twin yet is listed in not_mirrored")
        elif twin is None:
            problems.append(f"{where}.{name}: no blocking twin")
        elif twin != expected:
            problems.append(f"{where}.{name}{twin} differs from async {name}{expected}")
    return problems


@pytest.mark.parametrize("facade", facades(), ids=lambda f: f.__qualname__)
def test_every_async_call_has_a_blocking_twin_of_the_same_signature(facade: type) -> None:
    assert twin_problems(facade) == []


def test_every_asyncio_client_has_a_blocking_facade() -> None:
    cores = {core_of(f) for f in facades()}
    clients = [getattr(aio, name) for name in aio.__all__ if name not in NO_FACADE]
    clients = [c for c in clients if inspect.isclass(c)] + [AsyncAdminClient]
    assert [c.__qualname__ for c in clients if c not in cores] == []


def test_the_facades_found_include_every_client() -> None:
    names = {f.__qualname__ for f in facades()}
    assert {"Producer", "PushConsumer", "LitePullConsumer", "TransactionProducer"} <= names
    assert "AdminClient" in names


def test_the_message_calls_have_one_signature_in_every_layer() -> None:
    """MQAdminImpl's signatures, as the asyncio clients, the admin client and the blocking
    facades expose them (RocketMQ's MQAdmin); the uniq-key flag is no public parameter."""
    names = [
        "view_message",
        "query_message",
        "query_message_by_uniq_key",
        "search_offset",
        "max_offset",
        "min_offset",
        "earliest_msg_store_time",
    ]
    impl = {n: _signature(getattr(MQAdminImpl, n)) for n in names}
    assert "is_uniq_key" not in impl["query_message"].parameters
    for core in (aio.Producer, aio.PushConsumer, aio.LitePullConsumer, AsyncAdminClient):
        assert {n: async_calls(core)[n] for n in names} == impl, core
    for facade in facades():
        if issubclass(core_of(facade), MQAdmin):
            assert {n: twin_signature(facade, n) for n in names} == impl, facade
