"""The blocking SimpleConsumer: the ``BlockingFacade`` of ``rocketq.client.aio.SimpleConsumer``
(receive, ack and change_invisible_duration run on the process's loop thread)::

    with SimpleConsumer("g", namesrv_addr="127.0.0.1:9876", subscriptions={"T": "*"}) as c:
        for msg in c.receive(16, invisible_duration_s=30):
            c.ack(msg)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rocketq.client.aio.simple_consumer import SimpleConsumer as AsyncSimpleConsumer
from rocketq.client.blocking_facade import (
    BlockingFacade,
    blocking_twin,
    shutdown_twin,
    start_twin,
)
from rocketq.client.message_selector import Subscription

_MEMBER = "MQConsumerInner: the client instance calls it, no user API"


class SimpleConsumer(BlockingFacade[AsyncSimpleConsumer]):
    not_mirrored = dict.fromkeys(
        (
            "consume_message_directly",
            "consumer_running_info",
            "do_rebalance",
            "persist_consumer_offset",
            "reset_offset",
        ),
        _MEMBER,
    )

    def __init__(
        self,
        consumer_group: str = "DEFAULT_CONSUMER",
        *,
        namesrv_addr: str = "",
        subscriptions: Mapping[str, Subscription] | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(AsyncSimpleConsumer(consumer_group, namesrv_addr=namesrv_addr, **kw))
        for topic, expression in (subscriptions or {}).items():
            self.impl.subscribe(topic, expression)

    start = start_twin(AsyncSimpleConsumer.start)
    shutdown = shutdown_twin(AsyncSimpleConsumer.shutdown)
    receive = blocking_twin(AsyncSimpleConsumer.receive)
    ack = blocking_twin(AsyncSimpleConsumer.ack)
    change_invisible_duration = blocking_twin(AsyncSimpleConsumer.change_invisible_duration)

    def subscribe(self, topic: str, expression: Subscription = "*") -> None:
        if not self.started:
            self.impl.subscribe(topic, expression)
            return

        async def on_loop() -> None:
            self.impl.subscribe(topic, expression)

        self.loop.run(on_loop())
