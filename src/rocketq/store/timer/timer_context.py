"""TimerContext: what the timer's enqueue, dequeue and put parts use of the TimerMessageStore
that owns them (a Protocol, so that they do not import ``timer_message_store``)."""

from __future__ import annotations

import threading
from typing import Protocol

from rocketq.common.message import MessageExt
from rocketq.store.config import StoreConfig
from rocketq.store.timer.delivery_marks import DeliveryMarks
from rocketq.store.timer.store_host import StoreHost
from rocketq.store.timer.timer_log import TimerLog
from rocketq.store.timer.timer_metrics import TimerMetrics
from rocketq.store.timer.timer_wheel import TimerWheel


class TimerContext(Protocol):
    message_store: StoreHost
    config: StoreConfig
    precision_ms: int
    timer_wheel: TimerWheel
    timer_log: TimerLog
    timer_metrics: TimerMetrics
    timer_roll_window_slots: int
    marks: DeliveryMarks | None
    shutting_down: threading.Event
    slot_lock: threading.Lock
    started_until: int  # the end of the last slot the dequeue has begun
    curr_read_time_ms: int
    curr_write_time_ms: int
    curr_queue_offset: int
    commit_queue_offset: int

    @property
    def is_running(self) -> bool: ...

    def maybe_move_write_time(self) -> None: ...

    def maybe_close_marks_window(self) -> None: ...

    def move_read_time(self) -> None: ...

    def add_metric(self, msg: MessageExt, value: int) -> None: ...
