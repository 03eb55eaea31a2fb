"""The messages a broker writes: built from a send request, or copied from a stored message.

RocketMQ builds a ``MessageExtBrokerInner`` field by field in each place that writes one
(``SendMessageProcessor``, ``ReplyMessageProcessor``, ``ScheduleMessageService``'s
``messageTimeup``, ``EndTransactionProcessor.endMessageTransaction``,
``TransactionalMessageBridge.renewHalfMessageInner``, ...). Here two builders do it for every
such place; what a place changes is a parameter:

- ``message_from_request``: a message as a producer sent it (SEND_MESSAGE, its batch and its
  reply twin): body, flag, sysflag, born time and reconsume count from the request header,
  the born host from the sender's address, the store host this broker's.
- ``copy_message``: a stored message written again under another topic or queue (send-back
  and DLQ, the delay level's re-put, a transaction's commit, renewed or discarded half): the
  body, flag, born time and born host carried over, the properties as the caller made them,
  sysflag, store host and reconsume count carried over unless the caller says otherwise.
"""

from __future__ import annotations

from rocketq.common.message import MessageExt
from rocketq.common.message_id import Host
from rocketq.remoting.protocol.headers import SendMessageRequestHeader


def born_host(addr: str) -> Host:
    """A message's born host: the (host, port) of the sender's ``ip:port``."""
    host, _, port = addr.rpartition(":")
    try:
        return (host or "127.0.0.1", int(port))
    except ValueError:
        return ("127.0.0.1", 0)


def message_from_request(
    h: SendMessageRequestHeader,
    remote_addr: str,
    store_host: Host,
    *,
    topic: str,
    queue_id: int,
    body: bytes,
    properties: dict[str, str] | None = None,
    flag: int | None = None,
    sys_flag: int | None = None,
) -> MessageExt:
    """The message of a send request; ``flag`` and ``sys_flag`` default to the header's."""
    return MessageExt(
        topic=topic,
        queue_id=queue_id,
        body=body,
        flag=h.flag if flag is None else flag,
        properties={} if properties is None else properties,
        sys_flag=h.sys_flag if sys_flag is None else sys_flag,
        born_timestamp=h.born_timestamp,
        born_host=born_host(remote_addr),
        store_host=store_host,
        reconsume_times=h.reconsume_times or 0,
    )


def copy_message(
    source: MessageExt,
    *,
    topic: str,
    queue_id: int,
    properties: dict[str, str],
    sys_flag: int | None = None,
    store_host: Host | None = None,
    reconsume_times: int | None = None,
) -> MessageExt:
    """``source`` to be written again as a new message (no offsets, store time or msgId)."""
    return MessageExt(
        topic=topic,
        queue_id=queue_id,
        body=source.body,
        flag=source.flag,
        properties=properties,
        sys_flag=source.sys_flag if sys_flag is None else sys_flag,
        born_timestamp=source.born_timestamp,
        born_host=source.born_host,
        store_host=source.store_host if store_host is None else store_host,
        reconsume_times=source.reconsume_times if reconsume_times is None else reconsume_times,
    )
