"""TimerService: one loop of the timer (TimerEnqueueGetService, TimerDequeueGetService,
TimerFlushService): run a step until stopped, waiting ``interval_ms`` (or what ``idle_wait_ms``
says, or until a wakeup) after a step that found nothing to do. A step that fails is logged
and the loop goes on."""

from __future__ import annotations

import logging
from collections.abc import Callable

from rocketq.store.service_thread import ServiceThread

log = logging.getLogger(__name__)

IdleWait = Callable[[], float]  # the wait after an idle step, computed when it begins


class TimerService(ServiceThread):
    def __init__(
        self,
        name: str,
        step: Callable[[], bool],
        interval_ms: float,
        idle_wait_ms: IdleWait | None = None,
    ) -> None:
        super().__init__(name)
        self.step = step
        self.interval_ms = interval_ms
        self.idle_wait_ms = idle_wait_ms

    def run(self) -> None:
        while not self.is_stopped():
            try:
                busy = self.step()
            except Exception:  # a failed timer round is logged and run again; the loop lives
                log.exception("%s failed", self.name)
                busy = False
            if not busy:
                wait = self.idle_wait_ms
                self.wait_for_running(self.interval_ms if wait is None else wait())
