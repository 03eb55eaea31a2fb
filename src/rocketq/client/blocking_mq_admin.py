"""BlockingMQAdmin: the blocking twins of RocketMQ's ``MQAdmin`` calls, for every facade whose
core is an ``MQAdmin`` (Producer, PushConsumer, LitePullConsumer, AdminClient). Each mirrors
``MQAdminImpl``'s method, the one place their signatures are written."""

from __future__ import annotations

from rocketq.client.aio.mq_admin_impl import MQAdminImpl
from rocketq.client.blocking_facade import blocking_twin


class BlockingMQAdmin:
    view_message = blocking_twin(MQAdminImpl.view_message)
    query_message = blocking_twin(MQAdminImpl.query_message)
    query_message_by_uniq_key = blocking_twin(MQAdminImpl.query_message_by_uniq_key)
    search_offset = blocking_twin(MQAdminImpl.search_offset)
    max_offset = blocking_twin(MQAdminImpl.max_offset)
    min_offset = blocking_twin(MQAdminImpl.min_offset)
    earliest_msg_store_time = blocking_twin(MQAdminImpl.earliest_msg_store_time)
