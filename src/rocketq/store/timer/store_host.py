"""StoreHost: what the timer needs of the MessageStore it runs in (a Protocol, so that the
timer does not import ``message_store``, which owns it)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Protocol

from rocketq.common.message import MessageExt
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.consume_queue import ConsumeQueue
from rocketq.store.message_writer import EachPutResult, PutRequest
from rocketq.store.results import PutMessageResult


class StoreHost(Protocol):
    def find_consume_queue(
        self, topic: str, queue_id: int, create: bool = True
    ) -> ConsumeQueue | None: ...

    def select_one_message_by_offset(
        self, commitlog_offset: int, size: int = 0
    ) -> bytes | None: ...

    def async_put_message(
        self, msg: MessageExt, *, wait_store_msg_ok: bool = True
    ) -> Future[PutMessageResult]: ...

    def async_put_each(self, puts: Sequence[PutRequest]) -> EachPutResult: ...

    def now_ms(self) -> int: ...

    def wait_for_dispatch(self, timeout_s: float = 10.0) -> bool: ...

    def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int: ...

    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int: ...

    def get_message_store_timestamp(self, topic: str, queue_id: int, offset: int) -> int: ...

    def get_min_phy_offset(self) -> int: ...

    def get_max_phy_offset(self) -> int: ...

    def dispatched_phy_offset(self) -> int: ...

    def read_records(self, begin: int, end: int) -> list[DispatchRequest]: ...
