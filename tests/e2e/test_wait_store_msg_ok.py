"""WAIT=false against a real SYNC_FLUSH broker: answered once appended, not after the msync.

The test holds the group commit's flush lock (the real service, only kept from flushing), so
"answered before the group commit" and "not answered until it" are observed, not timed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rocketq.common.message import Message
from rocketq.common.message_decoder import encode_batch_messages
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.store.flush import GroupCommitService
from rocketq.testing import run_broker, until
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request

TIMEOUT_S = 10.0


async def test_wait_false_sends_are_answered_before_the_group_commit_and_wait_true_after(
    tmp_path: Path,
) -> None:
    props = small_store_properties(flushDiskType="SYNC_FLUSH")
    async with (
        run_broker(tmp_path / "store", store_properties=props) as broker,
        RemotingClient() as client,
    ):
        store = broker.message_store
        group_commit = store.flush_service
        assert isinstance(group_commit, GroupCommitService)
        queue = store.commit_log.mapped_file_queue
        addr = broker.broker_addr
        warm = await client.invoke(addr, send_request("WaitT", b"warm-up"), TIMEOUT_S)
        assert warm.code == ResponseCode.SUCCESS, warm.remark
        assert group_commit._flush_lock.acquire(timeout=TIMEOUT_S)
        try:
            no_wait = send_request("WaitT", b"no-wait", extra={"WAIT": "false"})
            answered = await client.invoke(addr, no_wait, TIMEOUT_S)
            assert answered.code == ResponseCode.SUCCESS, answered.remark
            assert queue.flushed_where < queue.get_max_offset()  # answered, not yet msynced
            batch = send_request(
                "WaitT",
                encode_batch_messages([Message("WaitT", b"b1"), Message("WaitT", b"b2")]),
                extra={"WAIT": "false"},
                batch=True,
                code=RequestCode.SEND_BATCH_MESSAGE,
            )
            answered = await client.invoke(addr, batch, TIMEOUT_S)
            assert answered.code == ResponseCode.SUCCESS, answered.remark
            assert queue.flushed_where < queue.get_max_offset()

            appended = queue.get_max_offset()
            waiting = asyncio.ensure_future(
                client.invoke(addr, send_request("WaitT", b"wait"), TIMEOUT_S)
            )
            assert await until(lambda: queue.get_max_offset() > appended, TIMEOUT_S)
            done, _ = await asyncio.wait({waiting}, timeout=0.5)
            assert not done  # appended, but the reply waits for the group commit
        finally:
            group_commit._flush_lock.release()
        response = await waiting
        assert response.code == ResponseCode.SUCCESS, response.remark
        assert queue.flushed_where >= queue.get_max_offset()
        assert int(response.ext_fields["queueOffset"]) == 4


async def test_the_delay_services_re_put_does_not_wait_for_the_group_commit(
    tmp_path: Path,
) -> None:
    """ScheduleMessageService re-puts a due message with WAIT=false, as RocketMQ's
    messageTimeup does: it is delivered while the group commit cannot flush."""
    props = small_store_properties(flushDiskType="SYNC_FLUSH", messageDelayLevel="1h")
    async with (
        run_broker(tmp_path / "store", store_properties=props) as broker,
        RemotingClient() as client,
    ):
        store = broker.message_store
        group_commit = store.flush_service
        assert isinstance(group_commit, GroupCommitService)
        schedule = broker.schedule_message_service
        assert schedule is not None
        queue = store.commit_log.mapped_file_queue
        delayed = send_request("WaitD", b"later", extra={"DELAY": "1"})
        sent = await client.invoke(broker.broker_addr, delayed, TIMEOUT_S)
        assert sent.code == ResponseCode.SUCCESS, sent.remark
        assert await until(
            lambda: store.get_max_offset_in_queue("SCHEDULE_TOPIC_XXXX", 0) == 1, TIMEOUT_S
        )
        assert store.get_max_offset_in_queue("WaitD", 0) == 0  # an hour early
        assert group_commit._flush_lock.acquire(timeout=TIMEOUT_S)
        try:
            two_hours_on = store.now_ms() + 2 * 3_600_000
            delivered = await asyncio.wait_for(schedule.deliver_due(1, two_hours_on), TIMEOUT_S)
            assert delivered == 1
            assert queue.flushed_where < queue.get_max_offset()  # re-put, not yet msynced
        finally:
            group_commit._flush_lock.release()
        assert await until(lambda: store.get_max_offset_in_queue("WaitD", 0) == 1, TIMEOUT_S)
        assert await until(lambda: queue.flushed_where >= queue.get_max_offset(), TIMEOUT_S)
