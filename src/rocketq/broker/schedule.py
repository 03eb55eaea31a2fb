"""ScheduleMessageService (store/schedule/ in RocketMQ 4.9): delivers delayed messages when due.

Delayed messages sit in SCHEDULE_TOPIC_XXXX, queue ``level - 1``, with REAL_TOPIC/REAL_QID.
Each level is a FIFO (same delay for all), so one cursor per level suffices: read from the
level's delay offset, and for each message that is due (store time + the level's delay) write a
copy to its real topic and queue, then advance. Progress is kept in ``config/delayOffset.json``
(``{"offsetTable":{1:17,2:0}}``, bare integer keys) every 10 s and at shutdown.

Between rounds the service sleeps until the earliest head that is not yet due comes due (as
RocketMQ's DeliverDelayedMessageTimerTask schedules itself for it), and at most the shortest
level's delay: a message stored during the sleep is due no sooner than that, so it is found in
time. RocketMQ polls a level with nothing due every 100 ms (``DELAY_FOR_A_WHILE``); here an
idle broker's loop wakes for it once a second instead of ten times.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
from typing import Any

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.config_manager import ConfigManager
from rocketq.broker.message_inner import copy_message
from rocketq.broker.store_future import await_store_future
from rocketq.common import clock
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.common.topic import SCHEDULE_QUEUE_NUMS, SCHEDULE_TOPIC
from rocketq.remoting.protocol import fastjson
from rocketq.store.results import GetMessageStatus

log = logging.getLogger(__name__)

DEFAULT_DELAY_LEVELS = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
SCHEDULE_GROUP = "SCHEDULE_CONSUMER"
POLL_INTERVAL_S = 0.1  # the sleep after a failed round
MAX_IDLE_WAIT_S = 1.0  # the longest sleep between rounds
BATCH = 32


def parse_delay_levels(text: str = DEFAULT_DELAY_LEVELS) -> dict[int, int]:
    """``"1s 5s 1m"`` -> {1: 1000, 2: 5000, 3: 60000}."""
    levels: dict[int, int] = {}
    for i, item in enumerate(text.split(), start=1):
        m = re.fullmatch(r"(\d+)([smhd])", item.strip())
        if m is None:
            raise ValueError(f"bad delay level {item!r}")
        levels[i] = int(m.group(1)) * _UNIT_MS[m.group(2)]
    return levels


class ScheduleMessageService(ConfigManager):
    def __init__(self, controller: BrokerContext, levels: str = DEFAULT_DELAY_LEVELS) -> None:
        super().__init__(
            os.path.join(controller.config.store_path_root_dir, "config", "delayOffset.json")
        )
        self.broker = controller
        self.delay_level_table = parse_delay_levels(levels)
        self.offset_table: dict[int, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._last_persist = 0.0
        self._next_due_ms: int | None = None  # the earliest head seen not yet due this round

    def encode(self) -> dict[str, Any]:
        return {"offsetTable": dict(sorted(self.offset_table.items()))}

    def decode(self, obj: dict[str, Any]) -> None:
        self.offset_table = {
            k: int(v) for k, v in fastjson.int_keys(obj.get("offsetTable") or {}).items()
        }

    def start(self, *, deliver: bool = True) -> None:
        """Load the delay offsets; deliver due messages unless ``deliver`` is False (a
        slave only keeps the offsets its master sends it)."""
        # messageDelayLevel from broker.conf lives in the store's config
        self.delay_level_table = self.broker.message_store.config.delay_level_table_ms()
        self.load()
        if deliver:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def shutdown(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.persist()

    async def _run(self) -> None:
        while True:
            wait_s = POLL_INTERVAL_S
            try:
                delivered = 0
                self._next_due_ms = None
                for level in range(1, min(SCHEDULE_QUEUE_NUMS, len(self.delay_level_table)) + 1):
                    delivered += await self.deliver_due(level)
                if (
                    time.monotonic() - self._last_persist
                    > self.broker.config.flush_delay_offset_interval_ms / 1000
                ):
                    self._last_persist = time.monotonic()
                    await asyncio.to_thread(self.persist)
                wait_s = self.idle_wait_s(clock.now_ms())
            except Exception:  # the delay service outlives one failed delivery round; logged
                log.exception("schedule delivery failed")
                delivered = 0
            if not delivered:
                await asyncio.sleep(wait_s)

    def idle_wait_s(self, now_ms: int) -> float:
        """The sleep after a round that delivered nothing: until the earliest waiting head is
        due, at most the shortest level's delay (and ``MAX_IDLE_WAIT_S``)."""
        shortest = min(self.delay_level_table.values(), default=1000)
        until = now_ms + shortest
        if self._next_due_ms is not None:
            until = min(until, self._next_due_ms)
        return min(MAX_IDLE_WAIT_S, max(0.001, (until - now_ms) / 1000))

    async def deliver_due(self, level: int, now_ms: int | None = None) -> int:
        """Deliver the due messages at the head of ``level``; returns how many."""
        store = self.broker.message_store
        queue_id = level - 1
        offset = self.offset_table.get(level, 0)
        if offset >= store.get_max_offset_in_queue(SCHEDULE_TOPIC, queue_id):
            return 0
        result = await asyncio.to_thread(
            store.get_message,
            SCHEDULE_GROUP,
            SCHEDULE_TOPIC,
            queue_id,
            offset,
            BATCH,
        )
        if result.status is not GetMessageStatus.FOUND:
            self.offset_table[level] = max(offset, result.next_begin_offset)
            return 0
        delay_ms = self.delay_level_table[level]
        now = clock.now_ms() if now_ms is None else now_ms
        delivered = 0
        for record in result.message_buffers:
            msg = decode_message(record, check_crc=False)
            due = msg.store_timestamp + delay_ms
            if due > now:
                if self._next_due_ms is None or due < self._next_due_ms:
                    self._next_due_ms = due
                break
            await self._deliver(msg)
            self.offset_table[level] = msg.queue_offset + 1
            delivered += 1
        return delivered

    async def _deliver(self, msg: MessageExt) -> None:
        props = dict(msg.properties)
        real_topic = props.get(mc.PROPERTY_REAL_TOPIC, "")
        real_qid = int(props.get(mc.PROPERTY_REAL_QUEUE_ID, "0") or 0)
        props.pop(mc.PROPERTY_DELAY_TIME_LEVEL, None)
        inner = copy_message(msg, topic=real_topic, queue_id=real_qid, properties=props)
        store = self.broker.message_store
        result = await await_store_future(store.async_put_message(inner, wait_store_msg_ok=False))
        if not result.is_ok:
            log.warning("delayed message to %s failed: %s", real_topic, result.status.name)
