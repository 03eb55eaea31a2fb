"""DefaultTransactionalMessageCheckListener: what the check service does with a half.

``resolve_half_msg`` asks a live producer of the half's group (CHECK_TRANSACTION_STATE, 39,
oneway; body = the half as a store record shown with its real topic and queue);
``resolve_discard_msg`` keeps a half checked too often in TRANS_CHECK_MAX_TIME_TOPIC (one
queue, read+write, created on demand), never delivered.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

from rocketq.broker.message_inner import copy_message
from rocketq.broker.store_future import await_store_future
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import encode_message
from rocketq.common.topic import TRANS_CHECK_MAX_TIME_TOPIC
from rocketq.common.topic_config import PERM_READ, PERM_WRITE
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import CheckTransactionStateRequestHeader

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext

log = logging.getLogger(__name__)


class TransactionalMessageCheckListener:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    async def resolve_half_msg(self, msg: MessageExt) -> None:
        """sendCheckMessage: CHECK_TRANSACTION_STATE to one live producer of the group."""
        uniq = msg.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        header = CheckTransactionStateRequestHeader(
            tran_state_table_offset=msg.queue_offset,
            commit_log_offset=msg.commitlog_offset,
            msg_id=uniq,
            transaction_id=uniq,
            offset_msg_id=msg.msg_id,
        )
        shown = dataclasses.replace(
            msg,
            topic=msg.properties.get(mc.PROPERTY_REAL_TOPIC, msg.topic),
            queue_id=int(msg.properties.get(mc.PROPERTY_REAL_QUEUE_ID, "0") or 0),
            store_size=0,
        )
        group = msg.properties.get(mc.PROPERTY_PRODUCER_GROUP, "")
        channel = self.broker.producer_manager.get_available_channel(group)
        if channel is None:
            log.warning("check transaction of %s failed: no live producer of %s", uniq, group)
            return
        request = RemotingCommand.create_request(
            RequestCode.CHECK_TRANSACTION_STATE,
            header.to_ext_fields(),
            bytes(encode_message(shown)),
        )
        log.debug("check of %s (queue offset %d) to %s", uniq, msg.queue_offset, channel)
        try:
            await channel.invoke_oneway(request)
        except Exception as exc:  # noqa: BLE001 -- a dead producer must not stop the scan
            log.info("check transaction to %s failed: %r", channel.remote_addr, exc)

    async def resolve_discard_msg(self, msg: MessageExt) -> None:
        """Keep a half checked too often in TRANS_CHECK_MAX_TIME_TOPIC (queue 0)."""
        tm = self.broker.topic_config_manager
        if tm.select_topic_config(TRANS_CHECK_MAX_TIME_TOPIC) is None:
            tm.create_topic_in_send_message_back_method(
                TRANS_CHECK_MAX_TIME_TOPIC, 1, PERM_READ | PERM_WRITE
            )
            self.broker.register_broker_all_soon()
        inner = copy_message(
            msg, topic=TRANS_CHECK_MAX_TIME_TOPIC, queue_id=0, properties=dict(msg.properties)
        )
        store = self.broker.message_store
        result = await await_store_future(store.async_put_message(inner, wait_store_msg_ok=False))
        log.warning(
            "half message %s (real topic %s) discarded after its checks: %s",
            msg.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
            msg.properties.get(mc.PROPERTY_REAL_TOPIC),
            result.status.name,
        )
