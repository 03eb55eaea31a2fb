"""QueryRoute and QueryAssignment (the Java proxy's ``RouteActivity``).

A route's MessageQueues carry, as broker endpoints, the endpoints the client asked through
(cluster mode echoes them; rocketq does in both modes, so clients behind NAT work). Queue ids
are renumbered as ``genMessageQueueFromQueueData``: read-only first, then write-only, then
read-write; ``accept_message_types`` comes from the topic's ``message.type``. A non-FIFO
group's assignment is one queue per broker with id -1; a FIFO group's one per read queue.
"""

from __future__ import annotations

from rocketq.common.topic import is_system_topic, validate_topic
from rocketq.common.topic_config import PERM_READ, PERM_WRITE
from rocketq.proxy.backend import MessagingBackend
from rocketq.proxy.message_converter import accept_types
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.status import Code, ProxyError
from rocketq.remoting.protocol.topic_route import MASTER_ID, QueueData


def check_topic(topic: str) -> None:
    """ILLEGAL_TOPIC for a name the 4.x rules refuse or a system topic."""
    reason = validate_topic(topic)
    if reason is not None:
        raise ProxyError(Code.ILLEGAL_TOPIC, reason)
    if is_system_topic(topic):
        raise ProxyError(Code.ILLEGAL_TOPIC, f"topic {topic} is a system topic")


def queues_of(qd: QueueData) -> list[pb.Permission]:
    """The permissions of a QueueData's queues in the order of their new ids."""
    readable, writable = bool(qd.perm & PERM_READ), bool(qd.perm & PERM_WRITE)
    r = qd.read_queue_nums if readable else 0
    w = qd.write_queue_nums if writable else 0
    rw = min(r, w)
    r, w = r - rw, w - rw
    return [pb.READ] * r + [pb.WRITE] * w + [pb.READ_WRITE] * rw


async def query_route(
    backend: MessagingBackend, topic: str, endpoints: pb.Endpoints
) -> list[pb.MessageQueue]:
    check_topic(topic)
    route = await backend.route(topic)
    types = accept_types(await backend.existing_topic_type(topic))
    masters = {bd.broker_name for bd in route.broker_datas if MASTER_ID in bd.broker_addrs}
    queues = []
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        if qd.broker_name not in masters:
            continue
        broker = pb.Broker(name=qd.broker_name, id=MASTER_ID, endpoints=endpoints)
        for queue_id, permission in enumerate(queues_of(qd)):
            queues.append(
                pb.MessageQueue(
                    topic=pb.Resource(name=topic),
                    id=queue_id,
                    permission=permission,
                    broker=broker,
                    accept_message_types=types,
                )
            )
    return queues


async def query_assignment(
    backend: MessagingBackend, topic: str, group: str, endpoints: pb.Endpoints
) -> list[pb.Assignment]:
    check_topic(topic)
    route = await backend.route(topic)
    fifo = (await backend.group_config(group, topic)).orderly
    masters = {bd.broker_name for bd in route.broker_datas if MASTER_ID in bd.broker_addrs}
    out: list[pb.Assignment] = []
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        if qd.broker_name not in masters or not qd.perm & PERM_READ:
            continue
        broker = pb.Broker(name=qd.broker_name, id=MASTER_ID, endpoints=endpoints)
        permission = pb.READ_WRITE if qd.perm & PERM_WRITE else pb.READ
        ids = range(qd.read_queue_nums) if fifo else [-1]
        out.extend(
            pb.Assignment(
                message_queue=pb.MessageQueue(
                    topic=pb.Resource(name=topic), id=i, permission=permission, broker=broker
                )
            )
            for i in ids
        )
    if not out:
        raise ProxyError(Code.FORBIDDEN, "no readable queue")
    return out
