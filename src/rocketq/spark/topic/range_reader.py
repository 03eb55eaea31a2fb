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
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_messages
from rocketq.errors import DataLossError, RocketQError
from rocketq.remoting.protocol.subscription import (
    EXPRESSION_TYPE_SQL92,
    EXPRESSION_TYPE_TAG,
    SubscriptionData,
    is_tag_matched,
)
from rocketq.spark.topic.offset_reader import QueueRange
from rocketq.spark.topic.pull_client import PullClient

log = logging.getLogger(__name__)

STALL_BACKOFF_S = 0.05
PULLS_IN_FLIGHT = 4
#: pull bodies decoded together (about 8,000 records of 100-byte bodies)
DECODE_BYTES = 2 << 20
#: messages asked per pull; brokers give at most ``maxTransferCountOnMessageInMemory`` (32 by
#: default) and ``maxTransferBytesOnMessageInMemory`` (256 KiB), and the reader learns the cap
PULL_BATCH_SIZE = 1024


@dataclass(frozen=True, slots=True)
class ReadSettings:
    """What a task needs besides its range (picklable, no live client)."""

    name_server: str
    sub_expression: str = "*"
    sub_expression_type: str = EXPRESSION_TYPE_TAG
    pull_batch_size: int = PULL_BATCH_SIZE
    poll_timeout_ms: int = 120_000
    fail_on_data_loss: bool = True


def read_range(r: QueueRange, settings: ReadSettings) -> Iterator[Any]:
    """Yield pyarrow RecordBatches covering ``r``, decoded column-wise (``pull_body``) in
    this, the task's, thread, never on the client's loop.

    Bodies are joined (records are self-delimiting) and decoded about ``DECODE_BYTES`` at a
    time: the columnar decode costs a fixed ~1 ms a call, so one call per pull of 32 would be
    slower than the row decoder. Every pull starts where the one before ended (a surprise
    restarts the window, unread), so the joined records are in queue order, each once; those
    at or past ``end`` (a filtered pull can reach beyond it) are dropped.
    """
    tags = _tag_filter(subscription_of(r.topic, settings))
    pending: list[bytes] = []
    size = 0
    for _low, body in pull_bodies(r, settings):
        pending.append(body)
        size += len(body)
        if size >= DECODE_BYTES:
            yield from _decoded(pending, r, tags)
            pending, size = [], 0
    if pending:
        yield from _decoded(pending, r, tags)


def _decoded(bodies: list[bytes], r: QueueRange, tags: list[str] | None) -> Iterator[Any]:
    from rocketq.spark.topic.pull_body import body_batches

    joined = bodies[0] if len(bodies) == 1 else b"".join(bodies)
    for batch in body_batches(joined, r.broker):
        kept = _kept(batch, r.start, r.end, tags)
        if kept.num_rows:
            yield kept


def pull_range(r: QueueRange, settings: ReadSettings) -> Iterator[MessageExt]:
    """The messages of ``r`` in queue order, decoded one by one: the row path, the reference
    ``read_range``'s columns are held equal to."""
    subscription = subscription_of(r.topic, settings)
    for low, body in pull_bodies(r, settings):
        for msg in decode_messages(body, decompress=True):
            if low <= msg.queue_offset < r.end and is_tag_matched(subscription, msg.tags):
                yield msg


def pull_bodies(r: QueueRange, settings: ReadSettings) -> Iterator[tuple[int, bytes]]:
    """The body of each pull that found messages for ``r``, with the lowest queue offset of
    it to keep, in queue order, up to ``PULLS_IN_FLIGHT`` pulls pipelined.

    Without a tag filter every offset holds a message, so the pull after one at ``o`` for
    ``n`` messages starts at ``o + n`` and can be sent before the first answers. A pull that
    ends anywhere else (a filter, a stall, the broker's caps) discards the pulls sent after it
    and the window restarts where the broker says. A broker that answers fewer messages than
    asked while more are there is capping the pull (``maxTransferCountOnMessageInMemory``,
    ``maxTransferBytesOnMessageInMemory``): later pulls ask for what it gave, so the window
    stops being discarded.
    """
    client = PullClient.for_name_server(settings.name_server)
    subscription = subscription_of(r.topic, settings)
    every_offset = subscription.expression_type == EXPRESSION_TYPE_TAG and not subscription.tags_set
    depth = PULLS_IN_FLIGHT if every_offset else 1
    batch_size = settings.pull_batch_size
    window: collections.deque[tuple[int, Future[tuple[PullResult, bytes]]]] = collections.deque()
    offset = planned = r.start
    stalled_since: float | None = None
    while offset < r.end:
        while len(window) < depth and planned < r.end:
            wanted = min(batch_size, r.end - planned)
            window.append((wanted, client.pull_later(r.mq, subscription, planned, wanted)))
            planned += wanted
        wanted, future = window.popleft()
        result, body = future.result(client.timeout_s * 3)
        if result.status is PullStatus.FOUND:
            stalled_since = None
            yield offset, body
            got = result.next_begin_offset - offset
            if every_offset and 0 < got < wanted and result.next_begin_offset < r.end:
                batch_size = got
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
        if planned - sum(w for w, _ in window) != offset:
            window.clear()  # answers of pulls sent past a surprise are dropped unread
            planned = offset


def _tag_filter(subscription: SubscriptionData) -> Any:
    """The tags a row must carry (the client's exact-tag check), None for every row."""
    if subscription.expression_type != EXPRESSION_TYPE_TAG or subscription.matches_all:
        return None
    return sorted(subscription.tags_set) or None


def _kept(batch: Any, low: int, end: int, tags: list[str] | None) -> Any:
    """The rows of ``batch`` in ``[low, end)`` of the queue (and with one of ``tags``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    offsets = batch.column("queueOffset")
    keep = pc.and_(pc.greater_equal(offsets, low), pc.less(offsets, end))
    if tags is not None:
        keep = pc.and_(keep, pc.is_in(batch.column("tags"), value_set=pa.array(tags, pa.string())))
    if pc.all(keep).as_py():
        return batch
    return batch.filter(keep)


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
