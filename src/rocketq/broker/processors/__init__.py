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
    from rocketq.broker.processors.pull import PullMessageProcessor
    from rocketq.broker.processors.send import SendMessageProcessor

    for processor in (
        SendMessageProcessor(controller),
        PullMessageProcessor(controller),
        ClientManageProcessor(controller),
        ConsumerManageProcessor(controller),
        AdminBrokerProcessor(controller),
        AclAdminProcessor(controller),
    ):
        processor.register()
    from rocketq.broker.processors.replication import ReplicationAdminProcessor

    ReplicationAdminProcessor(controller).register()
