"""Raw request builders for tests that speak the wire (what a client library would send)."""

from __future__ import annotations

import time

from rocketq.common import message_const as mc
from rocketq.common.pull_sys_flag import FLAG_SUBSCRIPTION
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.bodies import (
    ConsumeFromWhere,
    ConsumerData,
    ConsumeType,
    HeartbeatData,
    MessageModel,
    ProducerData,
)
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    CreateTopicRequestHeader,
    PullMessageRequestHeader,
    SendMessageRequestHeader,
)
from rocketq.remoting.protocol.subscription import SubscriptionData
from rocketq.response_code import ResponseCode


def props_text(props: dict[str, str]) -> str:
    return "".join(f"{k}\x01{v}\x02" for k, v in props.items())


def send_request(
    topic: str,
    body: bytes,
    *,
    tags: str | None = None,
    keys: str | None = None,
    extra: dict[str, str] | None = None,
    queue_id: int = 0,
    sys_flag: int = 0,
    batch: bool = False,
    code: int = RequestCode.SEND_MESSAGE,
) -> RemotingCommand:
    props: dict[str, str] = {}
    if tags:
        props[mc.PROPERTY_TAGS] = tags
    if keys:
        props[mc.PROPERTY_KEYS] = keys
    props[mc.PROPERTY_WAIT_STORE_MSG_OK] = "true"
    props.update(extra or {})
    header = SendMessageRequestHeader(
        producer_group="PG",
        topic=topic,
        default_topic="TBW102",
        default_topic_queue_nums=4,
        queue_id=queue_id,
        sys_flag=sys_flag,
        born_timestamp=int(time.time() * 1000),
        flag=0,
        properties=props_text(props),
        reconsume_times=0,
        batch=batch,
    )
    fields = (
        header.to_ext_fields()
        if code == RequestCode.SEND_MESSAGE
        else header.to_v2().to_ext_fields()
    )
    return RemotingCommand.create_request(code, fields, body)


def pull_request(
    group: str,
    topic: str,
    queue_id: int,
    offset: int,
    *,
    expression: str = "*",
    sys_flag: int = FLAG_SUBSCRIPTION,
    suspend_ms: int = 15_000,
    commit_offset: int = -1,
    max_nums: int = 32,
) -> RemotingCommand:
    header = PullMessageRequestHeader(
        consumer_group=group,
        topic=topic,
        queue_id=queue_id,
        queue_offset=offset,
        max_msg_nums=max_nums,
        sys_flag=sys_flag,
        commit_offset=commit_offset,
        suspend_timeout_millis=suspend_ms,
        sub_version=0,
        subscription=expression,
    )
    return RemotingCommand.create_request(RequestCode.PULL_MESSAGE, header.to_ext_fields())


def heartbeat(
    client_id: str,
    group: str,
    topic: str,
    expression: str = "*",
    consume_from_where: ConsumeFromWhere = ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
) -> RemotingCommand:
    data = HeartbeatData(
        client_id=client_id,
        producer_data_set=[ProducerData(group_name="PG")],
        consumer_data_set=[
            ConsumerData(
                group_name=group,
                consume_type=ConsumeType.CONSUME_PASSIVELY,
                message_model=MessageModel.CLUSTERING,
                consume_from_where=consume_from_where,
                subscription_data_set=[SubscriptionData(topic=topic, sub_string=expression)],
            )
        ],
    )
    return RemotingCommand.create_request(RequestCode.HEART_BEAT, body=data.encode())


def request(code: int, **fields: object) -> RemotingCommand:
    return RemotingCommand.create_request(code, {k: str(v) for k, v in fields.items()})


def create_topic_request(topic: str, queues: int = 4) -> RemotingCommand:
    """UPDATE_AND_CREATE_TOPIC with mqadmin updateTopic's defaults (read-write, one tag)."""
    header = CreateTopicRequestHeader(
        topic=topic,
        default_topic="TBW102",
        read_queue_nums=queues,
        write_queue_nums=queues,
        perm=6,
        topic_filter_type="SINGLE_TAG",
        order=False,
    )
    return RemotingCommand.create_request(
        RequestCode.UPDATE_AND_CREATE_TOPIC, header.to_ext_fields()
    )


async def create_topic(addrs: list[str], topic: str, queues: int = 4) -> None:
    """UPDATE_AND_CREATE_TOPIC on each broker, as mqadmin updateTopic does; asserts SUCCESS."""
    client = RemotingClient()
    try:
        for addr in addrs:
            response = await client.invoke(addr, create_topic_request(topic, queues), 5)
            assert response.code == ResponseCode.SUCCESS, response.remark
    finally:
        await client.shutdown()
