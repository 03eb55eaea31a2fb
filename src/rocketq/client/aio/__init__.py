"""The asyncio client: Producer, PushConsumer, LitePullConsumer, SimpleConsumer and their
shared instance."""

from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.aio.lite_pull_consumer import LitePullConsumer
from rocketq.client.aio.producer import Producer, select_message_queue_by_hash
from rocketq.client.aio.push_consumer import PushConsumer
from rocketq.client.aio.simple_consumer import SimpleConsumer
from rocketq.client.aio.transaction_producer import TransactionProducer

__all__ = [
    "LitePullConsumer",
    "MQClientInstance",
    "Producer",
    "PushConsumer",
    "SimpleConsumer",
    "TransactionProducer",
    "select_message_queue_by_hash",
]
