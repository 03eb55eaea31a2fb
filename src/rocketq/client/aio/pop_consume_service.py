"""The push consumer's POP mode: ConsumeMessagePopConcurrentlyService and
ConsumeMessagePopOrderlyService over remoting POP (a PushConsumer with
``client_rebalance=False``, RocketMQ 5's ``setClientRebalance(false)``).

Theory of operation: no queue is assigned to this client. For each (subscribed topic, broker)
of the routes one task pops (all queues, queueId -1) up to ``pop_batch_nums`` messages with
``pop_invisible_time_s``, long-polling the broker for ``broker_suspend_max_time_s``, and hands
them to a consume task (at most ``consume_thread_max`` batches in flight, then the pops wait),
which runs the listener and acks each consumed message. Concurrently, a failed message's invisible
time becomes the POP delay level of its ``reconsume_times`` (10 s, 30 s, 1 min, ...;
DefaultMQPushConsumerImpl.popDelayLevel), so the broker delivers it again then; one that
failed ``max_reconsume_times`` times is acked (the broker's revive sends it to the DLQ when
it expires more often than the group's retryMaxTimes). Orderly, the pop is a FIFO pop
(``order=true``): messages run one batch at a time in offset order and a failure makes the rest
of the popped batch visible again after ``suspend_current_queue_time_s``, so the broker
delivers it first again. A pop that failed is retried with the same ``attemptId`` (the broker
answers a FIFO retry with the same messages); a successful one takes a new id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable

from rocketq.client.aio import pop_api
from rocketq.client.aio.consume_service import ConsumeService
from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.config import PushConsumerConfig
from rocketq.common.message import MessageExt
from rocketq.errors import RocketQError
from rocketq.remoting.protocol.subscription import SubscriptionData

log = logging.getLogger(__name__)

POP_DELAY_LEVELS_S = (
    10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200,
)  # fmt: skip
DEFAULT_MAX_RECONSUME_TIMES = 16

Target = tuple[str, str]  # (topic, broker name)


class PopConsumeService:
    def __init__(
        self,
        instance: MQClientInstance,
        config: PushConsumerConfig,
        consume: ConsumeService,
        subscriptions: Callable[[], dict[str, SubscriptionData]],
        *,
        orderly: bool,
    ) -> None:
        self.instance = instance
        self.config = config
        self.group = config.consumer_group
        self.consume = consume
        self.subscriptions = subscriptions
        self.orderly = orderly
        self._loops: dict[Target, asyncio.Task[None]] = {}
        self._consuming: set[asyncio.Task[None]] = set()
        self._running = True

    def targets(self) -> set[Target]:
        subs = self.subscriptions()
        out: set[Target] = set()
        for topic in subs:
            route = self.instance.topic_route_table.get(topic)
            if route is None:
                continue
            for qd in route.queue_datas:
                if qd.read_queue_nums > 0:
                    out.add((topic, qd.broker_name))
        return out

    async def refresh(self) -> None:
        """RebalanceImpl's POP mode: a pop loop per (topic, broker) of the routes."""
        if not self._running:
            return
        for topic in list(self.subscriptions()):
            if topic not in self.instance.topic_route_table:
                with contextlib.suppress(RocketQError, OSError):
                    await self.instance.update_topic_route(topic)
        wanted = self.targets()
        for target in [t for t, task in self._loops.items() if task.done()]:
            del self._loops[target]  # its topic was unsubscribed; subscribed again it restarts
        for target in set(self._loops) - wanted:
            self._loops.pop(target).cancel()
        loop = asyncio.get_running_loop()
        for target in wanted - set(self._loops):
            self._loops[target] = loop.create_task(self._pop_loop(*target))

    async def shutdown(self, await_termination_s: float) -> None:
        self._running = False
        tasks = list(self._loops.values())
        self._loops.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._consuming:  # let popped batches finish (else they come back when invisible)
            await asyncio.wait(set(self._consuming), timeout=await_termination_s)
        for task in list(self._consuming):
            task.cancel()

    async def _pop_loop(self, topic: str, broker_name: str) -> None:
        c = self.config
        attempt_id = uuid.uuid4().hex
        while self._running:
            sub = self.subscriptions().get(topic)
            if sub is None:
                return
            try:
                addr = await self.instance.find_broker_addr_or_refresh(broker_name, topic)
                result = await pop_api.pop_message(
                    self.instance, addr, broker_name, self.group, sub,
                    max_nums=c.pop_batch_nums,
                    invisible_ms=int(c.pop_invisible_time_s * 1000),
                    poll_ms=int(c.broker_suspend_max_time_s * 1000),
                    order=self.orderly, attempt_id=attempt_id,
                )  # fmt: skip
            except (RocketQError, OSError) as exc:
                log.info("pop of %s from %s failed: %r", topic, broker_name, exc)
                await asyncio.sleep(c.pull_time_delay_when_exception_s)
                continue
            attempt_id = uuid.uuid4().hex
            if result.polling_full:
                await asyncio.sleep(c.pull_time_delay_when_flow_control_s)
            elif result.msgs and self.orderly:  # the queue is blocked until these are done
                await self._consume(addr, result.msgs)
            elif result.msgs:
                await self._submit(addr, result.msgs)

    async def _submit(self, addr: str, msgs: list[MessageExt]) -> None:
        while len(self._consuming) >= self.config.consume_thread_max:
            await asyncio.wait(set(self._consuming), return_when=asyncio.FIRST_COMPLETED)
        task = asyncio.get_running_loop().create_task(self._consume(addr, msgs))
        self._consuming.add(task)
        task.add_done_callback(self._consuming.discard)

    async def _consume(self, addr: str, msgs: list[MessageExt]) -> None:
        if self.orderly:
            await self._consume_orderly(addr, msgs)
            return
        size = self.config.consume_message_batch_max_size
        chunks = [msgs[i : i + size] for i in range(0, len(msgs), size)]
        statuses = await self.consume.call_listener_chunks(chunks)
        for chunk, status in zip(chunks, statuses, strict=True):
            for msg in chunk:
                if status.ok or msg.reconsume_times >= self._max_reconsume_times():
                    await self._ack(addr, msg)
                else:
                    level = min(msg.reconsume_times, len(POP_DELAY_LEVELS_S) - 1)
                    await self._change(addr, msg, POP_DELAY_LEVELS_S[level])

    async def _consume_orderly(self, addr: str, msgs: list[MessageExt]) -> None:
        size = self.config.consume_message_batch_max_size
        for i in range(0, len(msgs), size):
            chunk = msgs[i : i + size]
            status = await self.consume.call_listener(chunk)
            if not status.ok:
                for msg in msgs[i:]:
                    await self._change(addr, msg, self.config.suspend_current_queue_time_s)
                return
            for msg in chunk:
                await self._ack(addr, msg)

    def _max_reconsume_times(self) -> int:
        times = self.config.max_reconsume_times
        return DEFAULT_MAX_RECONSUME_TIMES if times < 0 else times

    async def _ack(self, addr: str, msg: MessageExt) -> None:
        try:
            await pop_api.ack_message(self.instance, addr, self.group, msg)
        except (RocketQError, OSError) as exc:
            log.warning("ack of %s failed: %r", msg.msg_id, exc)

    async def _change(self, addr: str, msg: MessageExt, invisible_s: float) -> None:
        try:
            await pop_api.change_invisible_time(
                self.instance, addr, self.group, msg, int(invisible_s * 1000)
            )
        except (RocketQError, OSError) as exc:
            log.warning("change of invisible time of %s failed: %r", msg.msg_id, exc)
