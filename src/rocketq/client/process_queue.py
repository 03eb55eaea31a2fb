"""ProcessQueue: the messages pulled from one queue and not yet consumed (flow control lives here).

Theory of operation: pulls of one queue return strictly increasing offsets and are put in
order, so the dict ``msg_tree_map`` stays sorted by offset while entries are removed anywhere;
its first key is the smallest offset still in flight, which is what may be committed (the
committed offset is the next one to consume). Orderly consumption moves taken messages into
``consuming`` and either commits them or puts them back in offset order. Used from one event
loop only.
"""

from __future__ import annotations

import asyncio
import time

from rocketq.common.message import MessageExt


class ProcessQueue:
    def __init__(self) -> None:
        self.msg_tree_map: dict[int, MessageExt] = {}
        self.consuming: dict[int, MessageExt] = {}
        self.msg_count = 0
        self.msg_size = 0
        self.queue_offset_max = 0
        self.dropped = False
        self.locked = False
        self.last_lock_monotonic = 0.0
        self.last_pull_monotonic = time.monotonic()
        self.consume_running = False  # orderly: a consume task is working on this queue
        self._space = asyncio.Event()

    def is_dropped(self) -> bool:
        """``dropped`` read after an await (another task may have set it meanwhile)."""
        return self.dropped

    # ------------------------------------------------------------------ pull side

    def put_message(self, msgs: list[MessageExt]) -> bool:
        """Add pulled messages; True when a consumer should be dispatched (orderly)."""
        for msg in msgs:
            if msg.queue_offset in self.msg_tree_map or msg.queue_offset in self.consuming:
                continue
            if self.msg_tree_map and msg.queue_offset < next(reversed(self.msg_tree_map)):
                self._insert_sorted({msg.queue_offset: msg})
            else:
                self.msg_tree_map[msg.queue_offset] = msg
            self.msg_count += 1
            self.msg_size += len(msg.body)
            self.queue_offset_max = max(self.queue_offset_max, msg.queue_offset)
        self._space.clear()
        dispatch = bool(self.msg_tree_map) and not self.consume_running
        if dispatch:
            self.consume_running = True
        return dispatch

    def max_span(self) -> int:
        if not self.msg_tree_map:
            return 0
        return next(reversed(self.msg_tree_map)) - next(iter(self.msg_tree_map))

    async def wait_for_space(self, timeout_s: float) -> None:
        """Wait until messages are removed from now on, at most ``timeout_s``. The caller
        found the queue over a limit with no await since: a removal before this call is in
        that finding, so the event is cleared first (left set by an earlier removal, it made
        the pull loop spin without ever yielding while the queue stayed over the limit)."""
        self._space.clear()
        try:
            async with asyncio.timeout(timeout_s):
                await self._space.wait()
        except TimeoutError:
            pass

    # ------------------------------------------------------------------ concurrent consume

    def remove_message(self, msgs: list[MessageExt]) -> int:
        """Forget consumed messages; the offset that may be committed now, -1 if none known."""
        if not self.msg_tree_map:
            return -1
        for msg in msgs:
            gone = self.msg_tree_map.pop(msg.queue_offset, None)
            if gone is not None:
                self.msg_count -= 1
                self.msg_size -= len(gone.body)
        self._space.set()
        if self.msg_tree_map:
            return next(iter(self.msg_tree_map))
        return self.queue_offset_max + 1

    # ------------------------------------------------------------------ orderly consume

    def take_messages(self, batch_size: int) -> list[MessageExt]:
        taken: list[MessageExt] = []
        while self.msg_tree_map and len(taken) < batch_size:
            offset = next(iter(self.msg_tree_map))
            msg = self.msg_tree_map.pop(offset)
            self.consuming[offset] = msg
            taken.append(msg)
        if not taken:
            self.consume_running = False
        return taken

    def commit(self) -> int:
        """Orderly: the consumed messages are done; the next offset to consume, -1 if none."""
        if not self.consuming:
            return -1
        offset = next(reversed(self.consuming)) + 1
        self.msg_count -= len(self.consuming)
        self.msg_size -= sum(len(m.body) for m in self.consuming.values())
        self.consuming.clear()
        self._space.set()
        return offset

    def make_message_to_consume_again(self, msgs: list[MessageExt]) -> None:
        back = {m.queue_offset: m for m in msgs if self.consuming.pop(m.queue_offset, None)}
        self._insert_sorted(back)

    def _insert_sorted(self, extra: dict[int, MessageExt]) -> None:
        merged = {**self.msg_tree_map, **extra}
        self.msg_tree_map = dict(sorted(merged.items()))

    def clear(self) -> None:
        self.msg_tree_map.clear()
        self.consuming.clear()
        self.msg_count = 0
        self.msg_size = 0
        self._space.set()
