"""Outcomes a client reports: SendStatus/SendResult, ConsumeStatus, PullStatus/PullResult."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from rocketq.common.message import MessageExt, MessageQueue


class SendStatus(Enum):
    SEND_OK = "SEND_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"


class ConsumeStatus(Enum):
    """What a listener returns (ConsumeConcurrentlyStatus / ConsumeOrderlyStatus merged)."""

    CONSUME_SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "SUSPEND_CURRENT_QUEUE_A_MOMENT"

    @property
    def ok(self) -> bool:
        return self is ConsumeStatus.CONSUME_SUCCESS


class PullStatus(Enum):
    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


@dataclass(frozen=True, slots=True, kw_only=True)
class SendResult:
    status: SendStatus
    msg_id: str  # the client message id (UNIQ_KEY); comma-joined for a batch
    message_queue: MessageQueue
    queue_offset: int
    offset_msg_id: str = ""  # the broker's offset msgId(s)
    transaction_id: str | None = None
    region_id: str = "DefaultRegion"
    trace_on: bool = True
    #: a timer message's handle for Producer.recall_message (RocketMQ 5.3.2); None otherwise
    recall_handle: str | None = None


@dataclass(slots=True, kw_only=True)
class PullResult:
    status: PullStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    msg_found_list: list[MessageExt] = field(default_factory=list)
    suggest_which_broker_id: int = 0
