"""Request processors: one module per RocketMQ processor, each registering its codes."""

from __future__ import annotations

from rocketq.broker.acl.processor import AclAdminProcessor
from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.processors.ack_message import AckMessageProcessor
from rocketq.broker.processors.admin import AdminBrokerProcessor
from rocketq.broker.processors.broker_config import BrokerConfigProcessor
from rocketq.broker.processors.broker_stats import BrokerStatsProcessor
from rocketq.broker.processors.change_invisible_time import ChangeInvisibleTimeProcessor
from rocketq.broker.processors.client_call import ClientCallProcessor
from rocketq.broker.processors.client_manage import ClientManageProcessor
from rocketq.broker.processors.consumer_admin import ConsumerAdminProcessor
from rocketq.broker.processors.consumer_manage import ConsumerManageProcessor
from rocketq.broker.processors.end_transaction import EndTransactionProcessor
from rocketq.broker.processors.notification import NotificationProcessor
from rocketq.broker.processors.pop_message import PopMessageProcessor
from rocketq.broker.processors.pull import PullMessageProcessor
from rocketq.broker.processors.recall import RecallMessageProcessor
from rocketq.broker.processors.reply import ReplyMessageProcessor
from rocketq.broker.processors.send import SendMessageProcessor


def register_all(broker: BrokerContext) -> None:
    for processor in (
        SendMessageProcessor(broker),
        PullMessageProcessor(broker),
        ClientManageProcessor(broker),
        ConsumerManageProcessor(broker),
        AdminBrokerProcessor(broker),
        EndTransactionProcessor(broker),
        AclAdminProcessor(broker),
        # consumer admin calls, broker config, client calls and request-reply (issue 9)
        ConsumerAdminProcessor(broker),
        BrokerConfigProcessor(broker),
        ClientCallProcessor(broker),
        ReplyMessageProcessor(broker),
        BrokerStatsProcessor(broker),  # VIEW_BROKER_STATS_DATA (issue 12)
        RecallMessageProcessor(broker),  # RECALL_MESSAGE, timer messages (issue 18)
        # POP consumption (issue 18)
        PopMessageProcessor(broker),
        AckMessageProcessor(broker),
        ChangeInvisibleTimeProcessor(broker),
        NotificationProcessor(broker),
    ):
        processor.register()
