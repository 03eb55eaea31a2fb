"""Transactions under ``aclEnable=true``: the producer signs its halves, its ends and its
answers to checks (the answer goes out through the client, like every signed request);
an unsigned end is refused and ends nothing."""

from __future__ import annotations

import dataclasses
from typing import Any

from rocketq.client import LocalTransactionState, Message, MessageExt
from rocketq.client.aio import TransactionProducer
from rocketq.common.topic import TRANS_HALF_TOPIC
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import EndTransactionRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.acl import NORMAL, WAIT_S, AclCluster
from rocketq.testing.cluster import FAST_CLIENT
from rocketq.testing.wait import until

TOPIC = "TxAcl"


class Listener:
    def __init__(self) -> None:
        self.checked: list[MessageExt] = []

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        return LocalTransactionState.COMMIT if arg == "now" else LocalTransactionState.UNKNOWN

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        self.checked.append(msg)
        return LocalTransactionState.COMMIT


def delivered(cluster: AclCluster) -> list[bytes]:
    store = cluster.broker.message_store
    return [b for q in range(2) for b in store.get_message("t", TOPIC, q, 0, 10).message_buffers]


async def test_a_signed_transaction_producer_commits_and_answers_checks(
    acl_cluster: AclCluster,
) -> None:
    broker = acl_cluster.broker
    broker.topic_config_manager.update_topic_config(
        TopicConfig(topic_name=TOPIC, read_queue_nums=2, write_queue_nums=2)
    )
    await broker.register_broker_all()
    listener = Listener()
    async with TransactionProducer(
        "pg-acl",
        listener,
        namesrv_addr=acl_cluster.namesrv.addr,
        access_key=NORMAL[0],
        secret_key=NORMAL[1],
        **FAST_CLIENT,
    ) as producer:
        await producer.send_message_in_transaction(Message(TOPIC, b"now"), arg="now")
        assert await until(lambda: len(delivered(acl_cluster)) == 1, WAIT_S)
        pending = await producer.send_message_in_transaction(Message(TOPIC, b"b"), arg="later")
        unsigned = EndTransactionRequestHeader(
            producer_group="pg-acl",
            tran_state_table_offset=pending.queue_offset,
            commit_log_offset=pending.handle.commit_log_offset if pending.handle else -1,
            commit_or_rollback=LocalTransactionState.COMMIT.commit_or_rollback,
            msg_id=pending.msg_id,
        )
        refused = await acl_cluster.invoke(
            RemotingCommand.create_request(RequestCode.END_TRANSACTION, unsigned.to_ext_fields())
        )
        assert refused.code == ResponseCode.NO_PERMISSION
        # every half is old enough now; scans by hand (the timer's interval is 60 s), each
        # given 0.2 s to be answered, until the half is dispatched, checked, and the signed
        # answer commits it
        broker.config = dataclasses.replace(broker.config, transaction_time_out_ms=0)
        service = broker.transactional_message_check_service
        for _scan in range(int(WAIT_S / 0.2)):
            await service.check()
            if await until(lambda: len(delivered(acl_cluster)) == 2, 0.2):
                break
        assert len(delivered(acl_cluster)) == 2
    assert {m.transaction_id for m in listener.checked} == {pending.msg_id}
    half_tc = broker.topic_config_manager.select_topic_config(TRANS_HALF_TOPIC)
    assert half_tc is not None
