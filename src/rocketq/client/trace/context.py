"""What one trace record holds (TraceContext, TraceBean, TraceType and the two enums whose
ordinals travel in it), as in RocketMQ's client/trace and common/message/MessageType."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

#: TraceConstants.CONTENT_SPLITOR: between the fields of one record
CONTENT_SPLITOR = "\u0001"
#: TraceConstants.FIELD_SPLITOR: after each record
FIELD_SPLITOR = "\u0002"
#: TraceConstants.GROUP_NAME_PREFIX: the trace producer's group
TRACE_GROUP_NAME_PREFIX = "_INNER_TRACE_PRODUCER"
DEFAULT_REGION_ID = "DefaultRegion"


class TraceType(enum.Enum):
    """TraceType: the record's first field is the member's name."""

    Pub = "Pub"
    Recall = "Recall"
    SubBefore = "SubBefore"
    SubAfter = "SubAfter"
    EndTransaction = "EndTransaction"


class MessageType(enum.IntEnum):
    """common/message/MessageType: the ordinal is written."""

    Normal_Msg = 0
    Trans_Msg_Half = 1
    Trans_msg_Commit = 2
    Delay_Msg = 3
    Order_Msg = 4


class ConsumeReturnType(enum.IntEnum):
    """ConsumeReturnType: a SubAfter record's context code is the ordinal."""

    SUCCESS = 0
    TIME_OUT = 1
    EXCEPTION = 2
    RETURNNULL = 3
    FAILED = 4


@dataclass(slots=True, kw_only=True)
class TraceBean:
    """TraceBean: one message of a record. Java writes an absent string as ``null``; the
    defaults keep that so a Java decoder (String.split drops trailing empties) reads ours."""

    topic: str = "null"
    msg_id: str = "null"
    offset_msg_id: str = "null"
    tags: str = "null"
    keys: str = "null"
    store_host: str = "null"
    client_host: str = "null"
    store_time_ms: int = 0
    retry_times: int = 0
    body_length: int = 0
    msg_type: MessageType = MessageType.Normal_Msg
    transaction_id: str = "null"
    transaction_state: str = "UNKNOW"
    from_transaction_check: bool = False


@dataclass(slots=True, kw_only=True)
class TraceContext:
    """TraceContext: one record, with the beans (messages) it covers."""

    trace_type: TraceType
    timestamp_ms: int = 0
    region_id: str = DEFAULT_REGION_ID
    group_name: str = "null"
    cost_time_ms: int = 0
    success: bool = True
    request_id: str = "null"
    context_code: int = 0
    trace_beans: list[TraceBean] = field(default_factory=list)

    def trans_keys(self) -> set[str]:
        """TraceTransferBean.transKey: each bean's msgId and keys, which the broker indexes so
        queryMsgTraceById finds the record by the traced message's id."""
        keys: set[str] = set()
        for bean in self.trace_beans:
            keys.add(bean.msg_id)
            if bean.keys and bean.keys != "null":
                keys.update(k for k in bean.keys.split(" ") if k)
        return keys
