"""SendMessage, EndTransaction, RecallMessage and the transaction check's relay (the Java
proxy's ``SendMessageActivity``, ``EndTransactionActivity``, ``RecallMessageActivity``,
``TransactionDataManager`` and ``ProxyClientRemotingProcessor.checkTransactionState``).

A send checks the message type against the topic's ``message.type`` when
``enableTopicMessageTypeCheck`` is on (MESSAGE_PROPERTY_CONFLICT_WITH_TYPE; MIXED, retry and
DLQ topics exempt). A half message's transaction data (broker, offsets) is kept for
``TRANSACTION_DATA_TTL_S`` for the client's EndTransaction; a broker's check of an open half
reaches the proxy on the connection it registered for producer group = topic, which relays it
as RecoverOrphanedTransactionCommand on the Telemetry stream of a producer of that topic and
keeps the check's data for the client's answer (EndTransaction, SOURCE_SERVER_CHECK).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from rocketq.client.fault import TopicPublishInfo
from rocketq.client.status import SendResult, SendStatus
from rocketq.common import message_const as mc
from rocketq.common.attribute import TopicMessageType
from rocketq.common.message import MessageExt
from rocketq.common.topic import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from rocketq.proxy.backend import MessagingBackend, commit_log_offset_of
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.message_converter import OutgoingMessage, message_type_of, to_grpc
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.proxy.status import Code, ProxyError, status
from rocketq.proxy.telemetry import ClientRegistry
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol import headers as h

log = logging.getLogger(__name__)
TRANSACTION_DATA_TTL_S = 30.0
_SEND_CODES = {
    SendStatus.SEND_OK: Code.OK,
    SendStatus.FLUSH_DISK_TIMEOUT: Code.MASTER_PERSISTENCE_TIMEOUT,
    SendStatus.FLUSH_SLAVE_TIMEOUT: Code.SLAVE_PERSISTENCE_TIMEOUT,
    SendStatus.SLAVE_NOT_AVAILABLE: Code.HA_NOT_AVAILABLE,
}
COMMIT = mc.MessageSysFlag.TRANSACTION_COMMIT_TYPE
ROLLBACK = mc.MessageSysFlag.TRANSACTION_ROLLBACK_TYPE


@dataclass(frozen=True, slots=True)
class TransactionData:
    broker_addr: str
    tran_state_table_offset: int
    commit_log_offset: int
    expires: float


async def check_message_type(
    backend: MessagingBackend, config: ProxyConfig, out: OutgoingMessage
) -> None:
    topic_type = await backend.existing_topic_type(out.topic)
    if not config.enable_topic_message_type_check:
        return
    if out.topic.startswith((RETRY_GROUP_TOPIC_PREFIX, DLQ_GROUP_TOPIC_PREFIX)):
        return
    if topic_type is TopicMessageType.MIXED:
        return
    sent = message_type_of(out.properties)
    if sent is not topic_type:
        raise ProxyError(
            Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
            f"current message type {sent.value} not match with topic accept message types"
            f" {topic_type.value}",
        )


class ProducerActivity:
    def __init__(
        self, backend: MessagingBackend, config: ProxyConfig, clients: ClientRegistry
    ) -> None:
        self.backend = backend
        self.config = config
        self.clients = clients
        self.transactions: dict[str, TransactionData] = {}

    async def send(self, out: OutgoingMessage) -> spb.SendResultEntry:
        await check_message_type(self.backend, self.config, out)
        result, addr = await self.backend.send(out)
        entry = spb.SendResultEntry(
            status=status(_SEND_CODES.get(result.status, Code.INTERNAL_SERVER_ERROR), "OK"),
            message_id=result.msg_id,
            offset=result.queue_offset,
        )
        if result.recall_handle:
            entry.recall_handle = result.recall_handle
        if out.is_transaction:
            tid = result.transaction_id or result.msg_id
            entry.transaction_id = tid
            self._remember(tid, addr, result)
        return entry

    def _remember(self, tid: str, addr: str, result: SendResult) -> None:
        now = time.monotonic()
        for key in [k for k, v in self.transactions.items() if v.expires < now]:
            del self.transactions[key]
        self.transactions[tid] = TransactionData(
            addr, result.queue_offset, commit_log_offset_of(result), now + TRANSACTION_DATA_TTL_S
        )

    async def end_transaction(self, request: spb.EndTransactionRequest) -> None:
        if not request.transaction_id:
            raise ProxyError(Code.INVALID_TRANSACTION_ID, "transaction id cannot be empty")
        if request.resolution == pb.TRANSACTION_RESOLUTION_UNSPECIFIED:
            return  # the checker's "unknown": the half stays open
        data = self.transactions.get(request.transaction_id)
        if data is None:
            raise ProxyError(
                Code.INTERNAL_SERVER_ERROR,
                f"transaction data of {request.transaction_id} not found",
            )
        from_check = request.source == pb.SOURCE_SERVER_CHECK
        header = h.EndTransactionRequestHeader(
            producer_group=request.topic.name,
            tran_state_table_offset=data.tran_state_table_offset,
            commit_log_offset=data.commit_log_offset,
            commit_or_rollback=COMMIT if request.resolution == pb.COMMIT else ROLLBACK,
            msg_id=request.message_id,
            from_transaction_check=from_check,
            transaction_id=request.transaction_id,
        )
        await self.backend.end_transaction(data.broker_addr, header, oneway=from_check)
        self.transactions.pop(request.transaction_id, None)

    def relay_for(self, topic: str) -> TransactionCheckRelay:
        return TransactionCheckRelay(topic, self)


class TransactionCheckRelay:
    """A producer group (= topic) of the proxy's client instance: the brokers' checks of the
    topic's open halves arrive here and go on to a producer's Telemetry stream."""

    def __init__(self, topic: str, activity: ProducerActivity) -> None:
        self.group = topic
        self.activity = activity

    def publish_topics(self) -> set[str]:
        return {self.group}

    def update_topic_publish_info(self, topic: str, info: TopicPublishInfo) -> None:
        return None

    async def check_transaction_state(
        self, channel: RemotingChannel, msg: MessageExt, ext_fields: dict[str, str]
    ) -> None:
        header = h.CheckTransactionStateRequestHeader.from_ext_fields(ext_fields)
        tid = header.transaction_id or msg.uniq_key or msg.msg_id
        producers = self.activity.clients.producers_of(self.group)
        if not producers:
            log.info("check of transaction %s of %s: no producer is connected", tid, self.group)
            return
        self.activity.transactions[tid] = TransactionData(
            channel.remote_addr, header.tran_state_table_offset, header.commit_log_offset,
            time.monotonic() + TRANSACTION_DATA_TTL_S,
        )  # fmt: skip
        topic = msg.properties.get(mc.PROPERTY_REAL_TOPIC) or self.group
        command = spb.TelemetryCommand(
            recover_orphaned_transaction_command=spb.RecoverOrphanedTransactionCommand(
                message=to_grpc(msg, topic), transaction_id=tid
            )
        )
        self.activity.clients.push(producers[-1], command)
