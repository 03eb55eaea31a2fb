"""Request processors: one module per RocketMQ processor, each registering its codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocketq.broker.controller import BrokerController


def register_all(controller: BrokerController) -> None:
    from rocketq.broker.acl.processor import AclAdminProcessor
    from rocketq.broker.processors.admin import AdminBrokerProcessor
    from rocketq.broker.processors.client_manage import ClientManageProcessor
    from rocketq.broker.processors.consumer_manage import ConsumerManageProcessor
    from rocketq.broker.processors.end_transaction import EndTransactionProcessor
    from rocketq.broker.processors.pull import PullMessageProcessor
    from rocketq.broker.processors.send import SendMessageProcessor

    for processor in (
        SendMessageProcessor(controller),
        PullMessageProcessor(controller),
        ClientManageProcessor(controller),
        ConsumerManageProcessor(controller),
        AdminBrokerProcessor(controller),
        EndTransactionProcessor(controller),
        AclAdminProcessor(controller),
    ):
        processor.register()
    _register_issue9(controller)


def _register_issue9(controller: BrokerController) -> None:
    """Consumer admin calls, broker config, client calls and request-reply (issue 9)."""
    from rocketq.broker.processors.broker_config import BrokerConfigProcessor
    from rocketq.broker.processors.client_call import ClientCallProcessor
    from rocketq.broker.processors.consumer_admin import ConsumerAdminProcessor
    from rocketq.broker.processors.reply import ReplyMessageProcessor

    for processor in (
        ConsumerAdminProcessor(controller),
        BrokerConfigProcessor(controller),
        ClientCallProcessor(controller),
        ReplyMessageProcessor(controller),
    ):
        processor.register()
