"""Reading one ``QueueRange`` on an executor: pulls at exact offsets, Arrow batches out.

Theory of operation: the task pulls ``[start, end)`` of one queue with PULL_MESSAGE, never
setting FLAG_COMMIT_OFFSET, so nothing is acknowledged and a retried task reads the same
range again (no acknowledgement inside ``read()``). With a tag expression the
broker skips unmatched offsets, so the reader steps by ``next_begin_offset`` rather than by
counting rows. It stops at ``end``; a message at or past ``end`` (a filtered pull can reach
beyond it) is dropped. OFFSET_MOVED (data deleted under the reader) is data loss:
``failOnDataLoss`` decides between failing the task and skipping to the broker's minimum.
A queue that answers "no new message" below ``end`` for ``pollTimeoutMs`` is a stall and
fails the task instead of hanging it.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from rocketq.client.message_selector import MessageSelector, Subscription, build_subscription
from rocketq.client.status import PullResult, PullStatus
from rocketq.common.clock import now_ms
from rocketq.errors import DataLossError, RocketQError
from rocketq.remoting.protocol.subscription import (
    EXPRESSION_TYPE_SQL92,
    EXPRESSION_TYPE_TAG,
    SubscriptionData,
)
from rocketq.spark.schema import RecordBatchBuilder, topic_row
from rocketq.spark.topic.offset_reader import QueueRange
from rocketq.spark.topic.pull_client import PullClient

log = logging.getLogger(__name__)

ROWS_PER_BATCH = 8192
STALL_BACKOFF_S = 0.05
PULLS_IN_FLIGHT = 4


@dataclass(frozen=True, slots=True)
class ReadSettings:
    """What a task needs besides its range (picklable, no live client)."""

    name_server: str
    sub_expression: str = "*"
    sub_expression_type: str = EXPRESSION_TYPE_TAG
    pull_batch_size: int = 32
    poll_timeout_ms: int = 120_000
    fail_on_data_loss: bool = True


def read_range(r: QueueRange, settings: ReadSettings) -> Iterator[Any]:
    """Yield pyarrow RecordBatches of ~``ROWS_PER_BATCH`` rows covering ``r``."""
    builder = RecordBatchBuilder()
    for msg in pull_range(r, settings):
        builder.append(topic_row(msg, r.broker))
        if len(builder) >= ROWS_PER_BATCH:
            yield builder.flush()
    if len(builder):
        yield builder.flush()


def pull_range(r: QueueRange, settings: ReadSettings) -> Iterator[Any]:
    """The messages of ``r`` in queue order, with up to ``PULLS_IN_FLIGHT`` pulls pipelined.

    Without a tag filter every offset holds a message, so the pull after one at ``o`` for
    ``n`` messages starts at ``o + n`` and can be sent before the first answers. A pull that
    ends anywhere else (fewer messages for the broker's byte limit, a filter, a stall)
    discards the pulls sent after it and the window restarts where the broker says.
    """
    client = PullClient.for_name_server(settings.name_server)
    subscription = subscription_of(r.topic, settings)
    every_offset = subscription.expression_type == EXPRESSION_TYPE_TAG and not subscription.tags_set
    depth = PULLS_IN_FLIGHT if every_offset else 1
    window: collections.deque[tuple[int, Future[PullResult]]] = collections.deque()
    offset = planned = r.start
    stalled_since: float | None = None
    while offset < r.end:
        while len(window) < depth and planned < r.end:
            wanted = min(settings.pull_batch_size, r.end - planned)
            window.append((planned, client.pull_later(r.mq, subscription, planned, wanted)))
            planned += wanted
        _at, future = window.popleft()
        result = future.result(client.timeout_s * 3)
        if result.status is PullStatus.FOUND:
            stalled_since = None
            for msg in result.msg_found_list:
                if msg.queue_offset >= r.end:
                    return
                if msg.queue_offset >= offset:
                    yield msg
            offset = max(offset + 1, result.next_begin_offset)
        elif result.status is PullStatus.NO_MATCHED_MSG:
            stalled_since = None
            offset = max(offset + 1, result.next_begin_offset)
        elif result.status is PullStatus.OFFSET_ILLEGAL:
            offset = _moved(r, offset, result.min_offset, settings)
        else:
            stalled_since = stalled_since or time.monotonic()
            _check_stall(r, offset, stalled_since, result, settings)
            time.sleep(STALL_BACKOFF_S)
        if (window[0][0] if window else planned) != offset:
            window.clear()  # answers of pulls sent past a surprise are dropped unread
            planned = offset


def subscription_of(topic: str, settings: ReadSettings) -> SubscriptionData:
    """A TAG subscription, or an SQL92 one that the broker evaluates on pull (it needs
    ``enablePropertyFilter=true``; a broker without it refuses the pull and says so)."""
    expression: Subscription = settings.sub_expression
    if settings.sub_expression_type == EXPRESSION_TYPE_SQL92:
        expression = MessageSelector.by_sql(settings.sub_expression)
    return build_subscription(topic, expression, now_ms())


def _check_stall(
    r: QueueRange, offset: int, since: float, result: PullResult, settings: ReadSettings
) -> None:
    if time.monotonic() - since > settings.poll_timeout_ms / 1000:
        raise RocketQError(
            f"{r.mq}: no message at offset {offset} (planned end {r.end}) for"
            f" {settings.poll_timeout_ms} ms (pollTimeoutMs); the broker's max offset"
            f" is {result.max_offset}"
        )


def _moved(r: QueueRange, offset: int, min_offset: int, settings: ReadSettings) -> int:
    if offset >= min_offset:
        raise DataLossError(f"{r.mq}: the broker moved offset {offset} (min {min_offset})")
    what = f"{r.mq}: offsets [{offset}, {min(min_offset, r.end)}) were deleted before being read"
    if settings.fail_on_data_loss:
        raise DataLossError(f"{what}; set failOnDataLoss=false to skip ahead")
    log.warning("skipping lost data: %s", what)
    return min_offset
