"""Transactional messages (RocketMQ 4.x model): the API, its vocabulary and its guarantees.

The API
-------
``TransactionProducer(group, listener, namesrv_addr=...)`` (blocking, ``rocketq.client``) and
its asyncio twin (``rocketq.client.aio``) send *half messages*: stored by the broker but not
delivered until the transaction is ended::

    class Orders:  # a TransactionListener
        def execute_local_transaction(self, msg, arg) -> LocalTransactionState:
            db.insert(arg); return LocalTransactionState.COMMIT
        def check_local_transaction(self, msg) -> LocalTransactionState:
            return LocalTransactionState.COMMIT if db.has(msg.transaction_id) else ...

    producer = TransactionProducer("pg-orders", Orders(), namesrv_addr="127.0.0.1:9876")
    producer.start()
    result = producer.send_message_in_transaction(Message("Orders", b"..."), arg=row)

``send_message_in_transaction`` sends the half, runs ``execute_local_transaction(msg, arg)``
and ends the transaction with its answer: COMMIT delivers the message to consumers, ROLLBACK
discards it, UNKNOWN (also an exception or ``None``) leaves it to the broker's check-back; a
half the broker stored but not safely (FLUSH_DISK_TIMEOUT, ...) is rolled back without running
the local transaction, as RocketMQ's client does. The
asyncio listener may return the state or an awaitable of it; the blocking listener runs in the
caller's thread, its checks on a worker thread.

Split sends and ends (the Spark exactly-once sink): ``send_half_message(msg)`` returns a
``TransactionHandle``, a small frozen, picklable value (producer group, broker, commitlog
offset and queue offset of the half, msg id, transaction id). Any client can end it later with
``end_transaction(broker_addr, handle, state)``, also one that did not send it: the broker
needs only the handle's fields. ``broker_addr=None`` uses the address in the handle.

Transactional batches (rocketq's extension; RocketMQ's broker refuses them):
``send_half_batch(msgs)`` sends messages of one topic as ONE batch half (one request, one
handle whose ``msg_id`` is the first message's and ``batch_count`` their number), which the
broker checks back once and ``end_transaction`` commits or rolls back as a whole with one
END_TRANSACTION_BATCH. A broker without the extension answers the send MESSAGE_ILLEGAL
(``MessageIllegalError``): send the messages one half each instead.

Check-back: a half neither committed nor rolled back ``transactionTimeOut`` (6 s, or the
message's CHECK_IMMUNITY_TIME_IN_SECONDS) after it was born is checked every
``transactionCheckInterval`` (60 s): the broker sends CHECK_TRANSACTION_STATE to a live
producer of the half's group, whose listener's ``check_local_transaction(msg)`` decides. Any
started ``TransactionProducer`` of the group answers, so a check listener is registered by
producer group: a process that only ends transactions (a driver) starts one with its listener
and never sends. UNKNOWN is checked again next interval; after ``transactionCheckMax`` (15)
checks the half is moved to TRANS_CHECK_MAX_TIME_TOPIC and never delivered. The message a
check shows has its real topic, ``transaction_id`` = the msg id, and the property
TRAN_PREPARED_QUEUE_OFFSET = ``tran_state_table_offset`` of the handle of the half as sent, so
a listener can tell two halves with the same msg id apart (a send retried after a timeout can
store a half twice; answer ROLLBACK for the one whose handle was not used).

Guarantees
----------
- A half is never delivered unless committed; a committed message is delivered at least once
  (the usual consumer guarantee), with the half's UNIQ_KEY as its msg id and its properties.
- ``end_transaction`` returns only after the broker stored the end (and for a commit the
  message, flushed under SYNC_FLUSH); an error means the end may not have happened and may be
  retried. Ends are idempotent while the broker runs: ending again the same way answers
  SUCCESS without a second delivery; ending the other way is refused. An end may name any copy
  of a half (the broker re-appends a half each time it checks it); all copies end together.
- After a broker restart a half still pending is checked again; progress (which halves are
  ended and checked) is kept in the broker's consumer offsets of group CID_RMQ_SYS_TRANS.
  Ends stay idempotent across a restart of a rocketq broker (clean or killed): it rebuilds
  its record of ended halves from the op queue's last 100,000 op messages (at least the last
  50,000 ends), so an end repeated after the restart answers SUCCESS without a second
  delivery. RocketMQ's broker, and an end older than that window, commit it a second time.
- ``send_message_in_transaction`` ends with a two-way request (RocketMQ's client sends it
  oneway) and logs, not raises, a failed end, as RocketMQ's client does: the check-back then
  decides.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any, Protocol

from rocketq.client.status import SendResult
from rocketq.common.message import Message, MessageExt
from rocketq.common.message_const import MessageSysFlag


class LocalTransactionState(Enum):
    """What a listener decides (LocalTransactionState: COMMIT_MESSAGE, ROLLBACK_MESSAGE, UNKNOW)."""

    COMMIT = "COMMIT_MESSAGE"
    ROLLBACK = "ROLLBACK_MESSAGE"
    UNKNOWN = "UNKNOW"

    @property
    def commit_or_rollback(self) -> int:
        """The END_TRANSACTION header value (a MessageSysFlag transaction type)."""
        return _TRAN_TYPE[self]


_TRAN_TYPE = {
    LocalTransactionState.COMMIT: MessageSysFlag.TRANSACTION_COMMIT_TYPE,
    LocalTransactionState.ROLLBACK: MessageSysFlag.TRANSACTION_ROLLBACK_TYPE,
    LocalTransactionState.UNKNOWN: MessageSysFlag.TRANSACTION_NOT_TYPE,
}


class TransactionListener(Protocol):
    """Decides transactions: returns a state (the asyncio client also takes an awaitable)."""

    def execute_local_transaction(self, msg: Message, arg: Any) -> Any: ...

    def check_local_transaction(self, msg: MessageExt) -> Any: ...


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TransactionHandle:
    """Everything END_TRANSACTION needs to end one half, from any client (picklable)."""

    producer_group: str
    broker_name: str
    broker_addr: str
    topic: str
    commit_log_offset: int
    tran_state_table_offset: int  # the half's queue offset in RMQ_SYS_TRANS_HALF_TOPIC
    msg_id: str  # UNIQ_KEY: the id consumers see after the commit
    transaction_id: str
    offset_msg_id: str = ""
    batch_count: int = 0  # a batch half's messages (rocketq's extension); 0: a single half


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TransactionSendResult(SendResult):
    local_transaction_state: LocalTransactionState
    handle: TransactionHandle | None = None


def as_state(value: Any) -> LocalTransactionState:
    """A listener's answer as a state: None and foreign values are UNKNOWN."""
    if isinstance(value, LocalTransactionState):
        return value
    if isinstance(value, str):
        for state in LocalTransactionState:
            if value.upper() in (state.name, state.value):
                return state
    return LocalTransactionState.UNKNOWN
