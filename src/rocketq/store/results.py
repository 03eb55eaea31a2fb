"""Status enums and result objects of the store (RocketMQ's PutMessageResult/GetMessageResult).

Expected outcomes are statuses, never exceptions (as RocketMQ's PutMessageStatus).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class PutMessageStatus(Enum):
    PUT_OK = "PUT_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"
    SERVICE_NOT_AVAILABLE = "SERVICE_NOT_AVAILABLE"
    CREATE_MAPPED_FILE_FAILED = "CREATE_MAPPED_FILE_FAILED"
    MESSAGE_ILLEGAL = "MESSAGE_ILLEGAL"
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    OS_PAGE_CACHE_BUSY = "OS_PAGE_CACHE_BUSY"
    #: controller mode: the SyncStateSet is smaller than minInSyncReplicas (CommitLog.java)
    IN_SYNC_REPLICAS_NOT_ENOUGH = "IN_SYNC_REPLICAS_NOT_ENOUGH"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"
    # RocketMQ 5's timer wheel (HookUtils.transformTimerMessage)
    WHEEL_TIMER_FLOW_CONTROL = "WHEEL_TIMER_FLOW_CONTROL"
    WHEEL_TIMER_MSG_ILLEGAL = "WHEEL_TIMER_MSG_ILLEGAL"
    WHEEL_TIMER_NOT_ENABLE = "WHEEL_TIMER_NOT_ENABLE"

    @property
    def is_ok(self) -> bool:
        """RocketMQ counts flush/slave timeouts as stored (the bytes are in the commitlog)."""
        return self in _STORED


_STORED = frozenset(
    {
        PutMessageStatus.PUT_OK,
        PutMessageStatus.FLUSH_DISK_TIMEOUT,
        PutMessageStatus.FLUSH_SLAVE_TIMEOUT,
        PutMessageStatus.SLAVE_NOT_AVAILABLE,
    }
)


class AppendMessageStatus(Enum):
    PUT_OK = "PUT_OK"
    END_OF_FILE = "END_OF_FILE"
    MESSAGE_SIZE_EXCEEDED = "MESSAGE_SIZE_EXCEEDED"
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"


# AppendMessageResult and PutMessageResult: one of each per put, never changed once made; not
# frozen, because a frozen dataclass's __init__ sets each field through object.__setattr__
# (3-4x the cost of a plain one: a few us per send on the broker's hot path, issue 22)
@dataclass(slots=True)
class AppendMessageResult:
    status: AppendMessageStatus
    wrote_offset: int = 0
    wrote_bytes: int = 0
    msg_id: str = ""
    queue_offset: int = 0
    store_timestamp: int = 0
    msg_num: int = 1


@dataclass(slots=True)
class PutMessageResult:
    status: PutMessageStatus
    append_result: AppendMessageResult | None = None

    @property
    def is_ok(self) -> bool:
        return self.status.is_ok


class GetMessageStatus(Enum):
    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"


@dataclass(slots=True)
class GetMessageResult:
    status: GetMessageStatus
    next_begin_offset: int = 0
    min_offset: int = 0
    max_offset: int = 0
    message_buffers: list[bytes] = field(default_factory=list)
    message_queue_offsets: list[int] = field(default_factory=list)
    suggest_pulling_from_slave: bool = False
    #: The records back to back, when ``get_message_body`` walked in C (then
    #: ``message_buffers`` and ``message_queue_offsets`` stay empty), and how many.
    body: bytes | None = None
    body_count: int = 0

    @property
    def message_count(self) -> int:
        return self.body_count if self.body is not None else len(self.message_buffers)

    @property
    def buffer_total_size(self) -> int:
        if self.body is not None:
            return len(self.body)
        return sum(len(b) for b in self.message_buffers)


@dataclass(slots=True)
class QueryMessageResult:
    """Messages found by key (RocketMQ's QueryMessageResult)."""

    message_buffer_list: list[bytes] = field(default_factory=list)
    index_last_update_timestamp: int = 0
    index_last_update_phyoffset: int = 0

    @property
    def buffer_total_size(self) -> int:
        return sum(len(b) for b in self.message_buffer_list)
