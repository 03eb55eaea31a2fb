"""rocketq.client: RocketMQ's client in Python form.

The blocking API (``Producer``, ``PushConsumer``, ``LitePullConsumer``) runs the asyncio core of
``rocketq.client.aio`` on a private event-loop thread::

    producer = Producer("pg", namesrv_addr="127.0.0.1:9876"); producer.start()
    result = producer.send(Message("Orders", b"...", tags="TagA", keys=["k1"]))
"""

from rocketq.client.aio.producer import select_message_queue_by_hash
from rocketq.client.blocking import LitePullConsumer, Producer, PushConsumer
from rocketq.client.blocking_simple_consumer import SimpleConsumer
from rocketq.client.config import (
    ClientConfig,
    LitePullConsumerConfig,
    ProducerConfig,
    PushConsumerConfig,
)
from rocketq.client.message_selector import MessageSelector
from rocketq.client.status import ConsumeStatus, PullStatus, SendResult, SendStatus
from rocketq.client.transaction import (
    LocalTransactionState,
    TransactionHandle,
    TransactionListener,
    TransactionSendResult,
)
from rocketq.client.transaction_producer import TransactionProducer
from rocketq.common.message import Message, MessageExt, MessageQueue
from rocketq.remoting.protocol.bodies import ConsumeFromWhere, MessageModel

__all__ = [
    "ClientConfig",
    "ConsumeFromWhere",
    "ConsumeStatus",
    "LitePullConsumer",
    "LitePullConsumerConfig",
    "LocalTransactionState",
    "Message",
    "MessageExt",
    "MessageModel",
    "MessageQueue",
    "MessageSelector",
    "Producer",
    "ProducerConfig",
    "PullStatus",
    "PushConsumer",
    "PushConsumerConfig",
    "SendResult",
    "SendStatus",
    "SimpleConsumer",
    "TransactionHandle",
    "TransactionListener",
    "TransactionProducer",
    "TransactionSendResult",
    "select_message_queue_by_hash",
]
