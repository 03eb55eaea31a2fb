"""ReceiveMessage, AckMessage, ChangeInvisibleDuration and ForwardMessageToDeadLetterQueue
(the Java proxy's ``ReceiveMessageActivity``, ``AckMessageActivity``,
``ChangeInvisibleDurationActivity``, ``ForwardMessageToDLQActivity`` and
``ReceiptHandleProcessor``).

A receive is a POP of the broker the client's queue names, all its queues at once. Without
``auto_renew`` the invisible time must lie in [10 s, 12 h] (ILLEGAL_INVISIBLE_TIME); with it
(PushConsumer) the proxy uses 60 s and renews each handle itself 10 s before it expires, for
at most 3 h, until the client acks, nacks (a change) or forwards it: the client keeps the
handle it got, and this module maps it to the current one. The polling time is the request's,
clamped to [5 s, 20 s] and to the call's remaining deadline (ILLEGAL_POLLING_TIME when that
leaves less than 5 s). A popped message already delivered ``max_attempts`` times goes to
``%DLQ%<group>`` instead of to the client. Ack, change and forward refuse an expired handle
(INVALID_RECEIPT_HANDLE, "receipt handle is expired").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

from rocketq.common.filter.sql92_parser import compile_sql92
from rocketq.common.message import MessageExt
from rocketq.errors import FilterExpressionError, RocketQError
from rocketq.proxy.backend import MessagingBackend, ReceiptHandle
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.status import Code, ProxyError
from rocketq.remoting.protocol.subscription import (
    EXPRESSION_TYPE_SQL92,
    SubscriptionData,
    build_subscription_data,
)

log = logging.getLogger(__name__)
MAX_BATCH = 32


@dataclass(frozen=True, slots=True)
class ReceiveParams:
    invisible_ms: int
    poll_ms: int
    batch: int


def subscription_of(topic: str, expression: pb.FilterExpression) -> SubscriptionData:
    """The broker's SubscriptionData of a gRPC filter; ILLEGAL_FILTER_EXPRESSION."""
    text = expression.expression or "*"
    try:
        if expression.type == pb.SQL:
            compile_sql92(text)
            return build_subscription_data(topic, text, 0, EXPRESSION_TYPE_SQL92)
        return build_subscription_data(topic, text)
    except (FilterExpressionError, RocketQError, ValueError) as exc:
        raise ProxyError(Code.ILLEGAL_FILTER_EXPRESSION, f"{text!r}: {exc}") from exc


def receive_params(
    config: ProxyConfig,
    *,
    auto_renew: bool,
    invisible_ms: int | None,
    long_polling_ms: int | None,
    batch_size: int,
    remaining_s: float | None,
    request_timeout_ms: int,
) -> ReceiveParams:
    if auto_renew:
        invisible = config.default_invisible_time_ms
    else:
        invisible = invisible_ms if invisible_ms is not None else -1
        if not config.min_invisible_time_ms <= invisible <= config.max_invisible_time_ms:
            raise ProxyError(
                Code.ILLEGAL_INVISIBLE_TIME,
                f"the invisible time {invisible} ms is outside"
                f" [{config.min_invisible_time_ms}, {config.max_invisible_time_ms}]",
            )
    remaining_ms = int(remaining_s * 1000) if remaining_s is not None else 10**9
    if remaining_ms < config.min_long_polling_ms:
        raise ProxyError(
            Code.ILLEGAL_POLLING_TIME,
            f"the deadline leaves {remaining_ms} ms, under the {config.min_long_polling_ms} ms"
            " minimum long polling",
        )
    poll = remaining_ms - request_timeout_ms // 2 if long_polling_ms is None else long_polling_ms
    poll = max(config.min_long_polling_ms, min(poll, config.max_long_polling_ms))
    # leave the answer time to travel back before the client's deadline
    poll = min(poll, max(0, remaining_ms - request_timeout_ms // 2))
    batch = MAX_BATCH if batch_size <= 0 else min(batch_size, MAX_BATCH)
    return ReceiveParams(invisible, poll, batch)


class ReceiptHandleRenewer:
    """The handles the proxy renews for auto_renew receives (DefaultReceiptHandleManager)."""

    def __init__(self, backend: MessagingBackend, config: ProxyConfig) -> None:
        self.backend = backend
        self.config = config
        self._current: dict[str, ReceiptHandle] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def add(self, group: str, topic: str, original: str) -> None:
        self._current[original] = ReceiptHandle.decode(original)
        task = asyncio.get_running_loop().create_task(self._renew(group, topic, original))
        self._tasks[original] = task

    def current(self, original: str) -> ReceiptHandle:
        found = self._current.get(original)
        return found if found is not None else ReceiptHandle.decode(original)

    def stop(self, original: str) -> None:
        self._current.pop(original, None)
        task = self._tasks.pop(original, None)
        if task is not None:
            task.cancel()

    async def shutdown(self) -> None:
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _renew(self, group: str, topic: str, original: str) -> None:
        give_up = time.time() * 1000 + self.config.renew_max_ms
        while original in self._current:
            handle = self._current[original]
            wait_ms = handle.info.next_visible_time - self.config.renew_ahead_ms - _now_ms()
            await asyncio.sleep(max(wait_ms, 0) / 1000)
            if original not in self._current or _now_ms() > give_up:
                break
            try:
                self._current[original] = await self.backend.change_invisible(
                    group, topic, handle, self.config.default_invisible_time_ms
                )
            except (RocketQError, OSError) as exc:
                log.warning("renewing the receipt handle of %s failed: %r", topic, exc)
                break
        self._current.pop(original, None)
        self._tasks.pop(original, None)


async def receive(
    backend: MessagingBackend,
    renewer: ReceiptHandleRenewer,
    *,
    broker_name: str,
    group: str,
    subscription: SubscriptionData,
    params: ReceiveParams,
    fifo: bool,
    max_attempts: int,
    auto_renew: bool,
    attempt_id: str | None,
) -> list[tuple[MessageExt, str]]:
    """One POP; messages past ``max_attempts`` go to the DLQ instead of to the client."""
    popped = await backend.pop(
        broker_name, group, subscription, batch=params.batch, invisible_ms=params.invisible_ms,
        poll_ms=params.poll_ms, order=fifo, attempt_id=attempt_id,
    )  # fmt: skip
    out = []
    for msg, handle in popped:
        if msg.reconsume_times >= max_attempts:
            message_id = msg.uniq_key or msg.msg_id
            try:
                await backend.forward_to_dlq(
                    group, subscription.topic, ReceiptHandle.decode(handle), message_id
                )
            except (RocketQError, OSError) as exc:
                log.warning("moving %s of %s to the DLQ failed: %r", message_id, group, exc)
            continue
        if auto_renew:
            renewer.add(group, subscription.topic, handle)
        out.append((msg, handle))
    return out


async def ack(
    backend: MessagingBackend, renewer: ReceiptHandleRenewer, group: str, topic: str, handle: str
) -> None:
    current = renewer.current(handle)
    current.check_alive(_now_ms())
    renewer.stop(handle)
    await backend.ack(group, topic, current)


async def change_invisible(
    backend: MessagingBackend,
    renewer: ReceiptHandleRenewer,
    group: str,
    topic: str,
    handle: str,
    invisible_ms: int,
    config: ProxyConfig,
) -> str:
    if not 0 <= invisible_ms <= config.max_invisible_time_ms:
        raise ProxyError(
            Code.ILLEGAL_INVISIBLE_TIME, f"invisible time {invisible_ms} ms is illegal"
        )
    current = renewer.current(handle)
    current.check_alive(_now_ms())
    renewer.stop(handle)
    return (await backend.change_invisible(group, topic, current, invisible_ms)).encode()


async def forward_to_dlq(
    backend: MessagingBackend,
    renewer: ReceiptHandleRenewer,
    group: str,
    topic: str,
    handle: str,
    message_id: str,
) -> None:
    current = renewer.current(handle)
    current.check_alive(_now_ms())
    renewer.stop(handle)
    await backend.forward_to_dlq(group, topic, current, message_id)


def _now_ms() -> int:
    return int(time.time() * 1000)
