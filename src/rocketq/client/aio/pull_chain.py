"""PullChain: a push consumer's pulls of one queue answered on the reader.

As the PullCallback of RocketMQ's DefaultMQPushConsumerImpl.pullMessage: the pull's response
runs :meth:`PullChain._on_response` inside the read that brought it (``invoke_callback`` on
the connection's response table), which decodes the messages, puts them in the process
queue, hands them to the consume service and writes the queue's next pull, all in that
call. No task wakes up for a response and no future carries it.

The chain does only the common case: a pull that FOUND messages, followed by a pull that
the pull loop's own checks allow at once (running, the queue not dropped, under its flow
control limits, still subscribed, read from the same address on an open connection). Any
other outcome (an error, a timeout, the connection's close, no new message, an illegal
offset, a check that fails) ends the chain and hands the loop what it needs to go on
(``PushConsumer._pull_loop``, whose code for those cases is unchanged).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Protocol

from rocketq.client.aio.api import pull_response
from rocketq.client.aio.pull_api import PullFields, process_pull_body
from rocketq.client.status import PullResult, PullStatus
from rocketq.common.message import MessageQueue
from rocketq.common.pull_sys_flag import build_sys_flag
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.channel_requests import ResponseCallback
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.remoting.protocol.topic_route import MASTER_ID

if TYPE_CHECKING:
    from rocketq.client.aio.consume_service import ConsumeService
    from rocketq.client.aio.instance import MQClientInstance
    from rocketq.client.aio.rebalance_impl import RebalanceImpl
    from rocketq.client.config import PushConsumerConfig
    from rocketq.client.process_queue import ProcessQueue

# what the chain hands its loop: the pull's result and RT (None: the chain took its found
# batches itself and stopped), and the offset to pull from next
ChainEnd = tuple[PullResult | None, float, int]


class ChainOwner(Protocol):
    """What a chain asks of its push consumer (PushConsumer)."""

    config: PushConsumerConfig
    group: str

    @property
    def rebalance(self) -> RebalanceImpl: ...

    def may_pull_now(self, pq: ProcessQueue) -> bool: ...

    def commit_offset_of(self, mq: MessageQueue) -> int: ...

    def took_found(
        self,
        instance: MQClientInstance,
        consume: ConsumeService,
        mq: MessageQueue,
        pq: ProcessQueue,
        result: PullResult,
        pull_ms: float,
    ) -> None: ...


class PullChain:
    """One queue's pulls on one connection, each written by the previous one's response."""

    __slots__ = (
        "_consume",
        "_consumer",
        "_fields",
        "_instance",
        "_slot",
        "_sub",
        "addr",
        "channel",
        "future",
        "mq",
        "offset",
        "pq",
        "pull_started",
    )

    def __init__(
        self,
        consumer: ChainOwner,
        instance: MQClientInstance,
        consume: ConsumeService,
        mq: MessageQueue,
        pq: ProcessQueue,
        addr: str,
        channel: RemotingChannel,
    ) -> None:
        self._consumer = consumer
        self._instance = instance
        self._consume = consume
        self.mq = mq
        self.pq = pq
        self.addr = addr
        self.channel = channel
        self.future: asyncio.Future[ChainEnd] = asyncio.get_running_loop().create_future()
        self.offset = 0
        self.pull_started = 0.0
        self._slot: ResponseCallback | None = None
        self._sub: SubscriptionData | None = None
        self._fields = PullFields()

    def pull(self, sub: SubscriptionData, offset: int, commit_offset: int) -> None:
        """Write one PULL_MESSAGE from ``offset`` (what ``pull_raw`` sends); raises if the
        write fails."""
        c = self._consumer.config
        sys_flag = build_sys_flag(
            commit_offset=commit_offset > 0,
            suspend=c.broker_suspend_max_time_s > 0,
            subscription=True,
        )
        fields = self._fields.fields(
            self._consumer.group,
            self.mq.topic,
            self.mq.queue_id,
            offset,
            c.pull_batch_size,
            sys_flag,
            commit_offset,
            int(c.broker_suspend_max_time_s * 1000),
            sub,
        )
        request = RemotingCommand.create_request(RequestCode.PULL_MESSAGE, fields)
        hook = self._instance.api.remoting._rpc_hook
        if hook is not None:
            hook(request)
        self.offset, self._sub = offset, sub
        self.pull_started = time.monotonic()
        self._slot = self.channel.invoke_callback(
            request, c.consumer_timeout_when_suspend_s, self._on_response
        )

    def stop(self) -> None:
        """The loop stopped waiting (its task cancelled, or the chain ended): a response that
        still comes is dropped as an unknown opaque, as ``invoke``'s is."""
        if self._slot is not None:
            self._slot.cancel()

    def _on_response(self, outcome: RemotingCommand | BaseException) -> None:
        future = self.future
        if future.done():
            return
        if isinstance(outcome, BaseException):  # a timeout, the connection's close
            future.set_exception(outcome)
            return
        try:
            end = self._took(outcome)
        except Exception as exc:  # noqa: BLE001 -- the loop's to handle, as its await's
            future.set_exception(exc)
            return
        if end is not None:
            future.set_result(end)

    def _took(self, response: RemotingCommand) -> ChainEnd | None:
        """The pull loop's step for one response; None when the next pull is written."""
        pull_ms = (time.monotonic() - self.pull_started) * 1000
        instance, mq, pq = self._instance, self.mq, self.pq
        result, body = pull_response(response)
        instance.pull_from_which_node[mq] = result.suggest_which_broker_id
        if result.status is not PullStatus.FOUND:
            return result, pull_ms, self.offset
        assert self._sub is not None
        found = result.msg_found_list = process_pull_body(body, self._sub, result)
        if not found or pq.is_dropped():
            return result, pull_ms, self.offset
        offset = result.next_begin_offset
        self._consumer.took_found(instance, self._consume, mq, pq, result, pull_ms)
        consumer = self._consumer
        sub = consumer.rebalance.subscription_inner.get(mq.topic)
        if sub is None or not consumer.may_pull_now(pq) or self.channel.is_closed:
            return None, 0.0, offset
        commit = self._next_pull_commit()
        if commit is None:
            return None, 0.0, offset
        self.pull(sub, offset, commit)
        return None

    def _next_pull_commit(self) -> int | None:
        """The commit offset of the next pull when it is read from this chain's address;
        None to hand the loop over (the queue is read elsewhere now)."""
        consumer, instance, mq = self._consumer, self._instance, self.mq
        broker_id = instance.pull_from_which_node.get(mq, MASTER_ID)
        found = instance.find_broker_address_in_subscribe(
            mq.broker_name, broker_id, only_this_broker=broker_id == MASTER_ID
        )
        if found is None or found[0] != self.addr:
            return None
        return 0 if found[1] else consumer.commit_offset_of(mq)
