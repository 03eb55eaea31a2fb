"""TransactionalMessageService: half messages, op messages and their progress (RocketMQ 4.x).

Theory of operation (TransactionalMessageBridge / TransactionalMessageServiceImpl, 4.9.8):

- A prepared message (property ``TRAN_MSG=true``) is stored as a *half message*: topic
  ``RMQ_SYS_TRANS_HALF_TOPIC``, queue 0, its real topic and queue in ``REAL_TOPIC`` /
  ``REAL_QID``, the transaction bits of its sysFlag reset to NOT_TYPE so it gets a consume
  queue unit in the half topic (and none in the real topic).
- Ending a half (commit or rollback, END_TRANSACTION) writes an *op message* to
  ``RMQ_SYS_TRANS_OP_HALF_TOPIC`` on the half's queue id: tag ``d``, body the half's queue
  offset in decimal ASCII, born/store host the broker. A commit first re-puts the half to its
  real topic (same UNIQ_KEY, ``TRAN_MSG`` and REAL_* cleared, sysFlag COMMIT_TYPE,
  PREPARED_TX_OFFSET = the half's commitlog offset).
- The check service reads both topics as consumer group ``CID_RMQ_SYS_TRANS``; their consumer
  offsets live in ``consumerOffset.json`` with every other group's, which is how the check
  progress survives a restart.
- A checked half is *renewed*: re-appended to the half queue (TRANSACTION_CHECK_TIMES counting
  the checks) and the check refers to the copy. Our copies also carry
  ``TRAN_PREPARED_QUEUE_OFFSET`` = the queue offset of the first half (RocketMQ sets it only on
  immunity copies), and an end of a copy writes a second op for that first offset, so a late end
  that names an older copy (the producer's own end after a check, or a Spark driver's commit)
  still ends every copy and the half is committed once.
- Ends are idempotent: the first offsets of ended halves are remembered (the last
  ENDED_MEMORY_COUNT), a repeated end with the same decision answers SUCCESS without a second
  re-put, and the opposite decision is refused. Beyond RocketMQ, the record survives a restart
  (clean or kill -9): our op messages carry the decision (``RQ_TRAN_END`` = 8 or 12), and at
  start-up the last ENDED_MEMORY_COUNT ops of each op queue are read back into the record
  (their bodies split on ``,`` as TransactionalMessageServiceImpl reads RocketMQ 5's), before
  any END_TRANSACTION is served: the same bound as the running record, and back before the
  op queue's consumed offset unless more than ENDED_MEMORY_COUNT ops wait behind it. Ops
  without the property (written by RocketMQ or an older rocketq) are not remembered.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
from typing import Protocol

from rocketq.broker.message_inner import copy_message
from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.broker.store_future import await_store_future
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.common.message_client_id import create_uniq_id
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_message
from rocketq.common.message_id import create_message_id
from rocketq.common.topic import TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC
from rocketq.common.topic_config import PERM_READ, PERM_WRITE, TopicConfig
from rocketq.store.message_store import MessageStore
from rocketq.store.results import GetMessageStatus, PutMessageResult, PutMessageStatus


class TransactionBroker(Protocol):
    """What the transactional message service uses of the broker (BrokerContext has it all)."""

    topic_config_manager: TopicConfigManager
    consumer_offset_manager: ConsumerOffsetManager

    @property
    def message_store(self) -> MessageStore: ...

    @property
    def broker_addr(self) -> str: ...

    @property
    def store_host(self) -> tuple[str, int]: ...

    def register_broker_all_soon(self) -> None: ...


log = logging.getLogger(__name__)

CID_RMQ_SYS_TRANS = "CID_RMQ_SYS_TRANS"
REMOVETAG = "d"
HALF_QUEUE_ID = 0
ENDED_MEMORY_COUNT = 100_000
PROPERTY_TRANSACTION_END = "RQ_TRAN_END"  # on our op messages: the decision, 8 or 12
RECOVER_PULL_BATCH = 32  # maxTransferCountOnMessageInMemory's default
RECOVER_DISPATCH_WAIT_S = 30.0
_DECISIONS = (MessageSysFlag.TRANSACTION_COMMIT_TYPE, MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
# nothing (yet) at the offset: the scan stops and keeps its offset. A queue with no consume
# queue yet (NO_MATCHED_LOGIC_QUEUE) is one whose first half is not dispatched yet.
NO_NEW_STATUSES = frozenset(
    {
        GetMessageStatus.NO_MESSAGE_IN_QUEUE,
        GetMessageStatus.OFFSET_OVERFLOW_ONE,
        GetMessageStatus.NO_MATCHED_LOGIC_QUEUE,
    }
)


@dataclasses.dataclass(frozen=True, slots=True)
class HalfPull:
    """One read of the half or op queue (TransactionalMessageBridge.getMessage)."""

    status: GetMessageStatus
    next_begin_offset: int
    messages: list[MessageExt]

    @property
    def no_new_message(self) -> bool:
        return self.status in NO_NEW_STATUSES


def first_queue_offset(msg: MessageExt) -> int:
    """The queue offset of the first half of this transaction (a copy names it)."""
    text = msg.properties.get(mc.PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET)
    try:
        return int(text) if text else msg.queue_offset
    except ValueError:
        return msg.queue_offset


class TransactionalMessageService:
    def __init__(self, controller: TransactionBroker) -> None:
        self.broker = controller
        # first half queue offset -> TRANSACTION_COMMIT_TYPE / TRANSACTION_ROLLBACK_TYPE
        self.ended: collections.OrderedDict[int, int] = collections.OrderedDict()
        self._ending: dict[int, int] = {}  # first offset -> the decision being written
        self._recovery: asyncio.Task[int] | None = None

    # ------------------------------------------------------------------ half messages

    def parse_half_message(self, msg: MessageExt) -> None:
        """parseHalfMessageInner, in place: real topic and queue into properties, queue 0."""
        msg.properties[mc.PROPERTY_REAL_TOPIC] = msg.topic
        msg.properties[mc.PROPERTY_REAL_QUEUE_ID] = str(msg.queue_id)
        msg.sys_flag = MessageSysFlag.reset_transaction_value(
            msg.sys_flag, MessageSysFlag.TRANSACTION_NOT_TYPE
        )
        msg.topic = TRANS_HALF_TOPIC
        msg.queue_id = HALF_QUEUE_ID
        self.select_topic_config(TRANS_HALF_TOPIC)

    def select_topic_config(self, topic: str) -> TopicConfig:
        tm = self.broker.topic_config_manager
        tc = tm.select_topic_config(topic)
        if tc is None:
            tc = tm.create_topic_in_send_message_back_method(topic, 1, PERM_READ | PERM_WRITE)
            self.broker.register_broker_all_soon()
        return tc

    async def look_half_message(self, commit_log_offset: int) -> MessageExt | None:
        await self.wait_recovered()  # an end must see the ends made before a restart
        store = self.broker.message_store
        msg = await asyncio.to_thread(store.look_message_by_offset, commit_log_offset)
        if msg is None or msg.topic != TRANS_HALF_TOPIC:
            return None
        return msg

    def renew_half_message(self, msg: MessageExt) -> MessageExt:
        """renewHalfMessageInner: the same half again, remembering the first queue offset."""
        props = dict(msg.properties)
        props[mc.PROPERTY_TRANSACTION_PREPARED_QUEUE_OFFSET] = str(first_queue_offset(msg))
        return copy_message(msg, topic=msg.topic, queue_id=msg.queue_id, properties=props)

    async def put_back_half_message(self, msg: MessageExt) -> MessageExt | None:
        """Append a renewed copy; the copy with its new offsets, or None when the put failed."""
        inner = self.renew_half_message(msg)
        result = await self._put(inner)
        append = result.append_result
        if result.status is not PutMessageStatus.PUT_OK or append is None:
            log.error("renewing half message %s failed: %s", msg.msg_id, result.status.name)
            return None
        inner.queue_offset = int(append.queue_offset)
        inner.commitlog_offset = int(append.wrote_offset)
        inner.store_timestamp = int(append.store_timestamp)
        inner.msg_id = append.msg_id or create_message_id(
            self.broker.store_host, append.wrote_offset
        )
        return inner

    # ------------------------------------------------------------------ op messages

    async def delete_prepare_message(self, half: MessageExt) -> bool:
        """putOpMessage(REMOVETAG): one op for this half, one more for its first half."""
        first = first_queue_offset(half)
        tran_type = self._ending.get(first)
        ok = await self._put_op(half.queue_id, half.queue_offset, tran_type)
        if first != half.queue_offset:
            ok = await self._put_op(half.queue_id, first, tran_type) and ok
        return ok

    async def _put_op(self, queue_id: int, half_queue_offset: int, tran_type: int | None) -> bool:
        self.select_topic_config(TRANS_OP_HALF_TOPIC)
        properties = {
            mc.PROPERTY_TAGS: REMOVETAG,
            mc.PROPERTY_WAIT_STORE_MSG_OK: "true",
            mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: create_uniq_id(),
        }
        if tran_type is not None:
            properties[PROPERTY_TRANSACTION_END] = str(tran_type)
        op = MessageExt(
            topic=TRANS_OP_HALF_TOPIC,
            queue_id=queue_id,
            body=str(half_queue_offset).encode("utf-8"),
            flag=0,
            properties=properties,
            sys_flag=0,
            born_timestamp=self.broker.message_store.now_ms(),
            born_host=self.broker.store_host,
            store_host=self.broker.store_host,
            reconsume_times=0,
        )
        result = await self._put(op)
        if result.status is not PutMessageStatus.PUT_OK:
            log.error("op message for half offset %d failed: %s", half_queue_offset, result)
            return False
        return True

    async def _put(self, msg: MessageExt) -> PutMessageResult:
        """Append without waiting for a flush (halves re-put and op messages)."""
        store = self.broker.message_store
        return await await_store_future(store.async_put_message(msg, wait_store_msg_ok=False))

    # ------------------------------------------------------------------ end bookkeeping

    def begin_end(self, first: int, tran_type: int) -> int | None:
        """Claim the end of ``first``; the earlier decision when it is ended or ending."""
        if first in self.ended:
            return self.ended[first]
        if first in self._ending:
            return MessageSysFlag.TRANSACTION_NOT_TYPE
        self._ending[first] = tran_type
        return None

    def finish_end(self, first: int, tran_type: int | None) -> None:
        """Release the claim; remember the decision when the end succeeded."""
        self._ending.pop(first, None)
        if tran_type is not None:
            self._remember(first, tran_type)

    def _remember(self, first: int, tran_type: int) -> None:
        self.ended[first] = tran_type
        self.ended.move_to_end(first)
        while len(self.ended) > ENDED_MEMORY_COUNT:
            self.ended.popitem(last=False)

    # ------------------------------------------------------------------ the record after a restart

    def start_recover_ended(self) -> None:
        """Rebuild the record of ended halves in the background (once); ends wait for it."""
        if self._recovery is None:
            loop = asyncio.get_running_loop()
            self._recovery = loop.create_task(self._recover_ended_logged())

    async def stop_recover_ended(self) -> None:
        if self._recovery is not None and not self._recovery.done():
            self._recovery.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._recovery

    async def wait_recovered(self) -> None:
        self.start_recover_ended()  # an end served before the check service started
        assert self._recovery is not None
        if not self._recovery.done():
            await asyncio.shield(self._recovery)

    async def _recover_ended_logged(self) -> int:
        try:
            count = await self.recover_ended()
        except Exception:  # ends are then idempotent only for what this run ends
            log.exception("rebuilding the record of ended halves failed")
            return 0
        log.info("record of ended halves rebuilt: %d from op messages", count)
        return count

    async def recover_ended(self) -> int:
        """Read the last ENDED_MEMORY_COUNT op messages of each op queue into ``ended``."""
        store = self.broker.message_store
        if not await asyncio.to_thread(store.wait_for_dispatch, RECOVER_DISPATCH_WAIT_S):
            log.warning("the store is still dispatching; ends are read up to where it is")
        count = 0
        for queue_id in self.half_queue_ids():
            hi = store.get_max_offset_in_queue(TRANS_OP_HALF_TOPIC, queue_id)
            lo = store.get_min_offset_in_queue(TRANS_OP_HALF_TOPIC, queue_id)
            offset = max(lo, hi - ENDED_MEMORY_COUNT)
            while offset < hi:
                pull = await self.pull(TRANS_OP_HALF_TOPIC, queue_id, offset, RECOVER_PULL_BATCH)
                if pull.next_begin_offset <= offset:
                    break
                count += sum(self._recover_op(op) for op in pull.messages)
                offset = pull.next_begin_offset
        return count

    def _recover_op(self, op: MessageExt) -> int:
        """Remember the halves one op message ended; how many (0 without a decision)."""
        text = op.properties.get(PROPERTY_TRANSACTION_END, "")
        if op.properties.get(mc.PROPERTY_TAGS) != REMOVETAG or not text.isdigit():
            return 0
        tran_type = int(text)
        if tran_type not in _DECISIONS:
            return 0
        offsets = [p for p in op.body.decode("utf-8", "replace").split(",") if p.isdigit()]
        for part in offsets:
            self._remember(int(part), tran_type)
        return len(offsets)

    # ------------------------------------------------------------------ reading and progress

    async def pull(self, topic: str, queue_id: int, offset: int, max_count: int) -> HalfPull:
        """Read and decode on a worker thread: a scan over a large half or op queue must not
        hold the event loop (heartbeats and sends share it) for a decode per message."""
        return await asyncio.to_thread(self._pull, topic, queue_id, offset, max_count)

    def _pull(self, topic: str, queue_id: int, offset: int, max_count: int) -> HalfPull:
        result = self.broker.message_store.get_message(
            CID_RMQ_SYS_TRANS, topic, queue_id, offset, max_count
        )
        found = result.status is GetMessageStatus.FOUND
        msgs = [
            decode_message(buf, check_crc=False, decompress=False)
            for buf in (result.message_buffers if found else [])
        ]
        return HalfPull(result.status, result.next_begin_offset, msgs)

    def fetch_consume_offset(self, topic: str, queue_id: int) -> int:
        offset = self.broker.consumer_offset_manager.query_offset(
            CID_RMQ_SYS_TRANS, topic, queue_id
        )
        if offset == -1:
            offset = self.broker.message_store.get_min_offset_in_queue(topic, queue_id)
        return offset

    def update_consume_offset(self, topic: str, queue_id: int, offset: int) -> None:
        self.broker.consumer_offset_manager.commit_offset(
            self.broker.broker_addr, CID_RMQ_SYS_TRANS, topic, queue_id, offset
        )

    def half_queue_ids(self) -> list[int]:
        tc = self.broker.topic_config_manager.select_topic_config(TRANS_HALF_TOPIC)
        return [] if tc is None else list(range(tc.read_queue_nums))
