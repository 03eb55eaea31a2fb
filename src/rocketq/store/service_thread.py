"""ServiceThread: RocketMQ's background-service base on top of ``threading``.

A subclass implements :meth:`run` as a loop over ``is_stopped()`` and ``wait_for_running(ms)``.
:meth:`wakeup` ends the current wait early; :meth:`shutdown` sets the stopped flag, wakes the
thread and joins it.
"""

from __future__ import annotations

import logging
import threading

log = logging.getLogger(__name__)


class ServiceThread:
    join_timeout_s: float = 90.0

    def __init__(self, name: str | None = None) -> None:
        self.name = name or type(self).__name__
        self._stopped = threading.Event()
        self._wakeup = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stopped.clear()
        self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            self.run()
        except Exception:  # a dying service must say why
            log.exception("service %s stopped by an error", self.name)

    def run(self) -> None:
        raise NotImplementedError

    def is_stopped(self) -> bool:
        return self._stopped.is_set()

    def wakeup(self) -> None:
        if not self._wakeup.is_set():  # Event.set takes a lock; most puts find it set
            self._wakeup.set()

    def wait_for_running(self, interval_ms: float) -> None:
        """Sleep up to ``interval_ms`` or until woken; then call :meth:`on_wait_end`."""
        if not self._wakeup.is_set():
            self._wakeup.wait(interval_ms / 1000.0)
        self._wakeup.clear()
        self.on_wait_end()

    def on_wait_end(self) -> None:
        """Hook run after each wait (GroupCommitService swaps its request lists here)."""

    def shutdown(self) -> None:
        self._stopped.set()
        self._wakeup.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.join_timeout_s)
        self._thread = None

    @property
    def is_alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
