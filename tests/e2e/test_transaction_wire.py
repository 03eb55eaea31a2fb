"""Transactions over raw remoting commands: what any client library (not only ours) gets."""

from __future__ import annotations

import pytest

from rocketq.broker.config import BrokerConfig
from rocketq.broker.transaction_check import calculate_op_offset, need_discard
from rocketq.common import message_decoder as codec
from rocketq.common.message import MessageExt
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import encode_batch_messages
from rocketq.common.message_id import decode_message_id
from rocketq.common.topic import TRANS_HALF_TOPIC
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import EndTransactionRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.cluster import Cluster
from rocketq.testing.wait import until
from rocketq.testing.wire import send_request

pytestmark = pytest.mark.e2e
WAIT = 10.0


def records(c: Cluster, topic: str, queue_id: int = 0) -> list[MessageExt]:
    result = c.broker.message_store.get_message("t", topic, queue_id, 0, 100)
    return [codec.decode_message(b) for b in result.message_buffers]


def end_request(fields: dict[str, str], tran: int, group: str = "PG") -> RemotingCommand:
    _host, phy = decode_message_id(fields["msgId"])
    header = EndTransactionRequestHeader(
        producer_group=group,
        tran_state_table_offset=int(fields["queueOffset"]),
        commit_log_offset=phy,
        commit_or_rollback=tran,
        msg_id="uniq",
    )
    return RemotingCommand.create_request(RequestCode.END_TRANSACTION, header.to_ext_fields())


async def test_a_prepared_sys_flag_alone_makes_a_half_that_end_transaction_commits(
    cluster: Cluster,
) -> None:
    prepared = MessageSysFlag.TRANSACTION_PREPARED_TYPE
    sent = await cluster.client.invoke(
        cluster.broker_addr, send_request("TxWire", b"half", queue_id=1, sys_flag=prepared), WAIT
    )
    assert sent.code == ResponseCode.SUCCESS, sent.remark
    assert sent.ext_fields["queueId"] == "1"
    assert await until(lambda: len(records(cluster, TRANS_HALF_TOPIC)) == 1, WAIT)
    [half] = records(cluster, TRANS_HALF_TOPIC)
    assert half.properties["TRAN_MSG"] == "true"
    assert half.properties["PGROUP"] == "PG"
    assert half.properties["REAL_QID"] == "1"
    assert records(cluster, "TxWire", 1) == []
    unknown = await cluster.client.invoke(
        cluster.broker_addr, end_request(sent.ext_fields, MessageSysFlag.TRANSACTION_NOT_TYPE), WAIT
    )
    assert unknown.code == ResponseCode.SUCCESS
    assert "checked again" in (unknown.remark or "")
    commit = MessageSysFlag.TRANSACTION_COMMIT_TYPE
    ended = await cluster.client.invoke(
        cluster.broker_addr, end_request(sent.ext_fields, commit), WAIT
    )
    assert ended.code == ResponseCode.SUCCESS, ended.remark
    assert await until(lambda: len(records(cluster, "TxWire", 1)) == 1, WAIT)
    assert records(cluster, "TxWire", 1)[0].body == b"half"


async def test_an_end_with_an_unknown_decision_is_refused_with_a_reason(cluster: Cluster) -> None:
    sent = await cluster.client.invoke(
        cluster.broker_addr, send_request("TxWire", b"x", extra={"TRAN_MSG": "true"}), WAIT
    )
    assert sent.code == ResponseCode.SUCCESS
    refused = await cluster.client.invoke(
        cluster.broker_addr, end_request(sent.ext_fields, 3), WAIT
    )
    assert refused.code == ResponseCode.SYSTEM_ERROR
    assert "commitOrRollback 3" in (refused.remark or "")


async def test_transactional_batches_and_rollback_sys_flags_are_refused_not_dropped(
    cluster: Cluster,
) -> None:
    from rocketq.common.message import Message

    half = Message("TxWire", b"a")
    half.put_property("TRAN_MSG", "true")  # a system property: set as is, not as a user one
    body = encode_batch_messages([half])
    batch = send_request("TxWire", body, batch=True, code=RequestCode.SEND_BATCH_MESSAGE)
    refused = await cluster.client.invoke(cluster.broker_addr, batch, WAIT)
    assert refused.code == ResponseCode.MESSAGE_ILLEGAL
    assert "batch" in (refused.remark or "")
    rollback = send_request("TxWire", b"r", sys_flag=MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
    refused = await cluster.client.invoke(cluster.broker_addr, rollback, WAIT)
    assert refused.code == ResponseCode.MESSAGE_ILLEGAL
    assert "END_TRANSACTION" in (refused.remark or "")
    assert cluster.broker.message_store.get_max_phy_offset() == 0


def test_broker_conf_transaction_keys_load_with_rocketmq_names() -> None:
    config = BrokerConfig.from_properties(
        {
            "transactionCheckInterval": "2000",
            "transactionTimeOut": "500",
            "transactionCheckMax": "3",
            "rejectTransactionMessage": "true",
        }
    )
    assert config.transaction_check_interval_ms == 2000
    assert config.transaction_time_out_ms == 500
    assert config.transaction_check_max == 3
    assert config.reject_transaction_message is True
    defaults = BrokerConfig()
    assert defaults.transaction_check_interval_ms == 60_000
    assert defaults.transaction_time_out_ms == 6_000
    assert defaults.transaction_check_max == 15


def test_the_op_offset_moves_over_consumed_ops_without_a_gap() -> None:
    assert calculate_op_offset([], 5) == 5
    assert calculate_op_offset([7, 5, 6], 5) == 8
    assert calculate_op_offset([5, 7], 5) == 6
    assert calculate_op_offset([3, 4, 5], 5) == 6


def test_need_discard_counts_checks_in_the_message_and_stops_at_the_maximum() -> None:
    msg = MessageExt(topic=TRANS_HALF_TOPIC)
    counts = []
    for _ in range(4):
        if need_discard(msg, 3):
            counts.append("discard")
            break
        counts.append(msg.properties["TRANSACTION_CHECK_TIMES"])
    assert counts == ["1", "2", "3", "discard"]


async def test_a_scan_before_the_first_half_is_dispatched_does_not_skip_it(
    cluster: Cluster,
) -> None:
    """Regression: the half topic exists before its consume queue does (the reput thread has
    not dispatched the first half yet); a scan then must keep the half offset where it is."""
    from rocketq.broker.transaction import CID_RMQ_SYS_TRANS

    broker = cluster.broker
    broker.transactional_message_service.select_topic_config(TRANS_HALF_TOPIC)
    await broker.transactional_message_check_service.check()
    offsets = broker.consumer_offset_manager
    assert offsets.query_offset(CID_RMQ_SYS_TRANS, TRANS_HALF_TOPIC, 0) in (-1, 0)


async def test_a_committed_half_with_a_delay_level_waits_its_delay_as_rocketmq_does(
    cluster: Cluster,
) -> None:
    sent = await cluster.client.invoke(
        cluster.broker_addr,
        send_request("TxDelay", b"later", extra={"TRAN_MSG": "true", "DELAY": "1"}),
        WAIT,
    )
    assert sent.code == ResponseCode.SUCCESS
    commit = MessageSysFlag.TRANSACTION_COMMIT_TYPE
    ended = await cluster.client.invoke(
        cluster.broker_addr, end_request(sent.ext_fields, commit), WAIT
    )
    assert ended.code == ResponseCode.SUCCESS, ended.remark
    assert await until(lambda: len(records(cluster, "SCHEDULE_TOPIC_XXXX", 0)) == 1, WAIT)
    assert await until(lambda: len(records(cluster, "TxDelay", 0)) == 1, WAIT)
    [delivered] = records(cluster, "TxDelay", 0)
    assert delivered.body == b"later"
    assert "TRAN_MSG" not in delivered.properties
