"""What a request needs (PlainAccessValidator.parse): its account, signature and resources.

Resources per request code (4.9.8's PlainAccessValidator#parse; groups as their ``%RETRY%`` topic):

- SEND_MESSAGE 10, SEND_MESSAGE_V2 310, SEND_BATCH_MESSAGE 320, SEND_REPLY_MESSAGE 324/325:
  topic PUB; to a ``%RETRY%`` topic: SUB on the group named in the header instead.
- CONSUMER_SEND_MSG_BACK 36, UNREGISTER_CLIENT 35, GET_CONSUMER_LIST_BY_GROUP 38: group SUB.
- PULL_MESSAGE 11, QUERY_CONSUMER_OFFSET 14, UPDATE_CONSUMER_OFFSET 15: topic and group SUB.
- LOCK_BATCH_MQ 41, UNLOCK_BATCH_MQ 42: group SUB and SUB on each queue's topic.
- QUERY_MESSAGE 12, SEARCH_OFFSET_BY_TIMESTAMP/GET_MAX/GET_MIN/EARLIEST 29-32: topic SUB.
- HEART_BEAT 34: each consumer: group SUB and SUB on every subscribed topic.
- ``permission.ADMIN_CODES``: an admin account.
- any other code: a valid signature of a known account.

SEND_BATCH_MESSAGE, offsets queries, LOCK/UNLOCK and offset lookups are checked stricter than
RocketMQ 4.9 does (RELIABILITY.md, ACL). A header or body that does not parse raises AclError:
nothing is known about what it asks for, so it is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rocketq.broker.acl.permission import PUB, SUB
from rocketq.common.topic import is_retry_topic, retry_topic
from rocketq.errors import AclError, RocketQError
from rocketq.remoting.acl import ACCESS_KEY, SECURITY_TOKEN, SIGNATURE
from rocketq.remoting.protocol.bodies import HeartbeatData, LockBatchRequestBody
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand

SEND_V1_CODES = frozenset({RequestCode.SEND_MESSAGE, RequestCode.SEND_REPLY_MESSAGE})
SEND_V2_CODES = frozenset(
    {
        RequestCode.SEND_MESSAGE_V2,
        RequestCode.SEND_BATCH_MESSAGE,
        RequestCode.SEND_REPLY_MESSAGE_V2,
    }
)
TOPIC_SUB_CODES = frozenset(
    {
        RequestCode.QUERY_MESSAGE,
        RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
        RequestCode.GET_MAX_OFFSET,
        RequestCode.GET_MIN_OFFSET,
        RequestCode.GET_EARLIEST_MSG_STORETIME,
    }
)
GROUP_SUB_CODES: dict[int, str] = {
    RequestCode.CONSUMER_SEND_MSG_BACK: "group",
    RequestCode.UNREGISTER_CLIENT: "consumerGroup",
    RequestCode.GET_CONSUMER_LIST_BY_GROUP: "consumerGroup",
}
TOPIC_AND_GROUP_CODES = frozenset(
    {
        RequestCode.PULL_MESSAGE,
        RequestCode.QUERY_CONSUMER_OFFSET,
        RequestCode.UPDATE_CONSUMER_OFFSET,
    }
)


@dataclass(slots=True)
class PlainAccessResource:
    """The access a request asks for: who (key, signature, address) and what (resources)."""

    request_code: int
    remote_ip: str
    access_key: str | None = None
    signature: str | None = None
    security_token: str | None = None
    resource_perm_map: dict[str, int] = field(default_factory=dict)

    def add_resource_and_perm(self, resource: str | None, perm: int) -> None:
        if resource:
            self.resource_perm_map[resource] = perm


def remote_ip_of(remote_addr: str) -> str:
    """``ip:port`` -> ``ip`` (the last colon splits, so IPv6 hosts keep theirs)."""
    host = remote_addr.rsplit(":", 1)[0] if ":" in remote_addr else remote_addr
    return host.strip("[]")


def parse(request: RemotingCommand, remote_addr: str) -> PlainAccessResource:
    """The access ``request`` needs; raises AclError when its header or body is unreadable."""
    fields = request.ext_fields
    resource = PlainAccessResource(
        request_code=request.code,
        remote_ip=remote_ip_of(remote_addr),
        access_key=fields.get(ACCESS_KEY),
        signature=fields.get(SIGNATURE),
        security_token=fields.get(SECURITY_TOKEN),
    )
    adder = _ADDERS.get(request.code)
    if adder is not None:
        try:
            adder(resource, request)
        except (RocketQError, ValueError, TypeError, KeyError) as exc:
            raise AclError(
                f"request code {request.code} cannot be checked, its content is invalid: {exc}"
            ) from exc
    return resource


def _add_send(resource: PlainAccessResource, request: RemotingCommand, v2: bool) -> None:
    fields = request.ext_fields
    topic = fields.get("b" if v2 else "topic")
    if topic is not None and is_retry_topic(topic):
        group = fields.get("a" if v2 else "producerGroup")
        resource.add_resource_and_perm(retry_topic(group) if group else None, SUB)
    else:
        resource.add_resource_and_perm(topic, PUB)


def _add_topic(resource: PlainAccessResource, request: RemotingCommand) -> None:
    resource.add_resource_and_perm(request.ext_fields.get("topic"), SUB)


def _add_group(resource: PlainAccessResource, request: RemotingCommand) -> None:
    group = request.ext_fields.get(GROUP_SUB_CODES[request.code])
    resource.add_resource_and_perm(retry_topic(group) if group else None, SUB)


def _add_topic_and_group(resource: PlainAccessResource, request: RemotingCommand) -> None:
    _add_topic(resource, request)
    group = request.ext_fields.get("consumerGroup")
    resource.add_resource_and_perm(retry_topic(group) if group else None, SUB)


def _add_heartbeat(resource: PlainAccessResource, request: RemotingCommand) -> None:
    for consumer in HeartbeatData.decode(request.body).consumer_data_set:
        resource.add_resource_and_perm(retry_topic(consumer.group_name), SUB)
        for subscription in consumer.subscription_data_set:
            resource.add_resource_and_perm(subscription.topic, SUB)


def _add_lock(resource: PlainAccessResource, request: RemotingCommand) -> None:
    body = LockBatchRequestBody.decode(request.body)
    resource.add_resource_and_perm(retry_topic(body.consumer_group), SUB)
    for mq in body.mq_set:
        resource.add_resource_and_perm(mq.topic, SUB)


Adder = Callable[[PlainAccessResource, RemotingCommand], None]
_ADDERS: dict[int, Adder] = {
    **{int(c): lambda r, q: _add_send(r, q, False) for c in SEND_V1_CODES},
    **{int(c): lambda r, q: _add_send(r, q, True) for c in SEND_V2_CODES},
    **{int(c): _add_topic for c in TOPIC_SUB_CODES},
    **{int(c): _add_group for c in GROUP_SUB_CODES},
    **{int(c): _add_topic_and_group for c in TOPIC_AND_GROUP_CODES},
    RequestCode.HEART_BEAT: _add_heartbeat,
    RequestCode.LOCK_BATCH_MQ: _add_lock,
    RequestCode.UNLOCK_BATCH_MQ: _add_lock,
}
