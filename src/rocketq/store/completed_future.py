"""CompletedFuture: a ``concurrent.futures.Future`` born with its result.

Every ASYNC_FLUSH put answers with a future that is complete before anyone sees it. A plain
``Future()`` builds a ``threading.Condition`` (an RLock and its Python wrapper) and
``set_result`` takes it and notifies nobody: about 3 us a put, a fifth of the store's put
path. This subclass starts in the FINISHED state and shares one module-level Condition
among all its instances: a finished future's condition is only ever held for the instant a
reader looks at its state (``result``, ``add_done_callback``, ``concurrent.futures.wait``),
never waited on, so sharing it costs no one a wait. It relies on the attributes
``concurrent.futures.Future.__init__`` sets (unchanged since Python 3.2); the store's tests
run these futures through ``result``, callbacks, ``wait`` and ``asyncio.wrap_future``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures._base import FINISHED
from typing import TypeVar

T = TypeVar("T")

_SHARED_CONDITION = threading.Condition()


class CompletedFuture(Future[T]):
    def __init__(self, result: T) -> None:  # no super().__init__: that builds a Condition
        self._condition = _SHARED_CONDITION
        self._state = FINISHED
        self._result = result
        self._exception = None
        self._waiters = []
        self._done_callbacks: list[Callable[[Future[T]], object]] = []
