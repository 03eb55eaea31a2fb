"""A transactional batch (a rocketq extension): many halves of one topic and queue as ONE half.

RocketMQ refuses a batch with the transaction-prepared flag (CommitLog.asyncPutMessages
answers MESSAGE_ILLEGAL for any transaction type of a MessageExtBatch) and has no request that
ends more than one half. rocketq's broker serves both, unless ``transactionBatchEnable`` is
false (then it answers as RocketMQ: MESSAGE_ILLEGAL for the batch, REQUEST_CODE_NOT_SUPPORTED
for END_TRANSACTION_BATCH), so a client that falls back on those codes works with either.

Theory of operation: a SEND_BATCH_MESSAGE (or code 10 with ``batch``) whose sysFlag is
TRANSACTION_PREPARED_TYPE is stored as one *batch half*: the half queue's ordinary record
(RMQ_SYS_TRANS_HALF_TOPIC queue 0, REAL_TOPIC / REAL_QID, TRAN_MSG, PGROUP), its body the
batch body as sent (MessageDecoder.encodeMessages; inflated when it came compressed), its
properties the batch header's plus ``RQ_TRAN_BATCH`` = the message count, and UNIQ_KEY = the
first message's. Everything the half queue does for a half it does for the batch once: one
op message ends it, one check-back (CHECK_TRANSACTION_STATE showing the batch half, whose
msg id is the first message's) asks about it, a renewal copies it, a discard keeps it.
Ending it (END_TRANSACTION_BATCH naming its offsets and count, or a plain END_TRANSACTION
naming it, as a check-back's answer does) commits or rolls back every message together; a
commit puts the messages to the real topic and queue as one batch append, each with its own
UNIQ_KEY and properties, sysFlag COMMIT_TYPE and PREPARED_TX_OFFSET = the batch half's
commitlog offset.
"""

from __future__ import annotations

from rocketq.common import message_const as mc
from rocketq.common.message import Message, MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import decode_batch_messages

PROPERTY_TRANSACTION_BATCH = "RQ_TRAN_BATCH"  # on a batch half: how many messages it holds


def batch_count(half: MessageExt) -> int:
    """The messages a batch half holds; 0 for a single half."""
    text = half.properties.get(PROPERTY_TRANSACTION_BATCH, "")
    return int(text) if text.isdigit() else 0


def batch_half_properties(header_props: dict[str, str], inner: list[Message]) -> dict[str, str]:
    """The batch half's properties: the batch header's, the count, the first message's id."""
    props = dict(header_props)
    props.pop(mc.PROPERTY_WAIT_STORE_MSG_OK, None)
    props[mc.PROPERTY_TRANSACTION_PREPARED] = "true"
    props[PROPERTY_TRANSACTION_BATCH] = str(len(inner))
    first = inner[0].properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
    if first:
        props[mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] = first
    else:
        props.pop(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, None)
    return props


def committed_messages(half: MessageExt, commit_log_offset: int, cluster: str) -> list[MessageExt]:
    """The messages a commit of ``half`` (a batch half) puts to its real topic and queue."""
    topic = half.properties.get(mc.PROPERTY_REAL_TOPIC, "")
    queue_id = int(half.properties.get(mc.PROPERTY_REAL_QUEUE_ID, "0") or 0)
    group = half.properties.get(mc.PROPERTY_PRODUCER_GROUP)
    sys_flag = MessageSysFlag.reset_transaction_value(
        half.sys_flag & ~MessageSysFlag.COMPRESSED_FLAG, MessageSysFlag.TRANSACTION_COMMIT_TYPE
    )
    out = []
    for m in decode_batch_messages(half.body, topic):
        props = dict(m.properties)
        props[mc.PROPERTY_CLUSTER] = cluster
        if group:
            props[mc.PROPERTY_PRODUCER_GROUP] = group
        msg = MessageExt(
            topic=topic,
            queue_id=queue_id,
            body=m.body,
            flag=m.flag,
            properties=props,
            sys_flag=sys_flag,
            born_timestamp=half.born_timestamp,
            born_host=half.born_host,
            store_host=half.store_host,
            reconsume_times=0,
        )
        msg.prepared_transaction_offset = commit_log_offset
        msg.transaction_id = props.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        out.append(msg)
    return out
