"""A broker dispatches a put's records on its event loop: a held pull is answered even with
the store's reput thread stopped, and the message it returns is the one just sent."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from rocketq.broker.long_polling import LoopDispatchScheduler
from rocketq.broker.put_batcher import PutBatcher
from rocketq.common.pull_sys_flag import build_sys_flag
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.headers import PullMessageRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.store.message_writer import PutRequest
from rocketq.store.results import PutMessageResult, PutMessageStatus
from rocketq.testing.broker import run_broker
from rocketq.testing.counting import CountingTransport
from rocketq.testing.store import new_msg
from rocketq.testing.wait import until
from rocketq.testing.wire import pull_request, send_request

SUSPEND = build_sys_flag(commit_offset=False, suspend=True, subscription=True)


async def test_a_held_pull_is_answered_by_the_loops_dispatch_without_the_reput_thread(
    tmp_path: Path,
) -> None:
    async with run_broker(tmp_path / "store") as broker, RemotingClient() as client:
        addr = f"127.0.0.1:{broker.port}"
        first = await client.invoke(addr, send_request("Hot", b"create", queue_id=0), 5.0)
        assert first.code == ResponseCode.SUCCESS, first.remark
        reput = broker.message_store.reput_service
        await asyncio.to_thread(reput.shutdown)  # from here only the loop dispatches
        assert not reput.is_alive
        store = broker.message_store
        assert await until(lambda: store.dispatch_behind_bytes() == 0, 10.0)
        pull = pull_request("G", "Hot", 0, 1, sys_flag=SUSPEND, suspend_ms=20_000)
        held = asyncio.ensure_future(client.invoke(addr, pull, 30.0))
        hold = broker.pull_request_hold_service
        assert await until(lambda: hold.held_count == 1, 10.0)
        # the held pull keeps its parsed header: its wake-up does not parse it again
        (held_pull,) = hold.held_pulls()
        assert held_pull.header == PullMessageRequestHeader.from_ext_fields(pull.ext_fields)
        sent = await client.invoke(addr, send_request("Hot", b"arrived", queue_id=0), 5.0)
        assert sent.code == ResponseCode.SUCCESS, sent.remark
        answer = await asyncio.wait_for(held, 10.0)  # far below the 20 s suspension
        assert answer.code == ResponseCode.SUCCESS, answer.remark
        assert b"arrived" in answer.body
        assert answer.ext_fields["nextBeginOffset"] == "2"


async def test_a_held_pull_is_answered_before_the_reply_to_the_send_that_woke_it(
    tmp_path: Path,
) -> None:
    async with run_broker(tmp_path / "store") as broker, RemotingClient() as client:
        addr = f"127.0.0.1:{broker.port}"
        first = await client.invoke(addr, send_request("Hot", b"create", queue_id=0), 5.0)
        assert first.code == ResponseCode.SUCCESS, first.remark
        # only the loop dispatches from here: the reput thread, racing it, could wake the pull
        # from its own thread after the send's reply went out (the order then depends on
        # the machine's load, and the test would not be testing the loop's dispatch)
        reput = broker.message_store.reput_service
        await asyncio.to_thread(reput.shutdown)
        store = broker.message_store
        assert await until(lambda: store.dispatch_behind_bytes() == 0, 10.0)
        hold = broker.pull_request_hold_service
        answered: list[str] = []
        pull = pull_request("G", "Hot", 0, 1, sys_flag=SUSPEND, suspend_ms=20_000)
        held = asyncio.ensure_future(client.invoke(addr, pull, 30.0))
        held.add_done_callback(lambda _: answered.append("pull"))
        assert await until(lambda: hold.held_count == 1, 10.0)
        send = asyncio.ensure_future(
            client.invoke(addr, send_request("Hot", b"arrived", queue_id=0), 10.0)
        )
        send.add_done_callback(lambda _: answered.append("send"))
        sent, got = await asyncio.wait_for(asyncio.gather(send, held), 15.0)
        assert sent.code == ResponseCode.SUCCESS, sent.remark
        assert got.code == ResponseCode.SUCCESS, got.remark
        assert b"arrived" in got.body
        # the same connection carried both: the pull's answer was written inside the put,
        # the send's reply after it
        assert answered == ["pull", "send"]


async def test_a_woken_pulls_answer_and_the_send_s_reply_leave_in_one_write(
    tmp_path: Path,
) -> None:
    """The pull a send's put wakes, on the send's connection, is answered in the writev of
    the send's reply (``hold_answers``): one write a latency message, not two."""
    async with run_broker(tmp_path / "store") as broker, RemotingClient() as client:
        addr = f"127.0.0.1:{broker.port}"
        first = await client.invoke(addr, send_request("Hot", b"create", queue_id=0), 5.0)
        assert first.code == ResponseCode.SUCCESS, first.remark
        reput = broker.message_store.reput_service
        await asyncio.to_thread(reput.shutdown)  # only the loop dispatches: inside the put
        store = broker.message_store
        assert await until(lambda: store.dispatch_behind_bytes() == 0, 10.0)
        (channel,) = broker.remoting_server.channels
        counting = CountingTransport(channel._writer.transport)
        channel._writer.transport = counting  # type: ignore[assignment]
        hold = broker.pull_request_hold_service
        stats = broker.broker_stats_manager
        for offset in (1, 2):
            misses = stats.get_message_times_total_miss
            pull = pull_request("G", "Hot", 0, offset, sys_flag=SUSPEND, suspend_ms=20_000)
            held = asyncio.ensure_future(client.invoke(addr, pull, 30.0))
            assert await until(lambda: hold.held_count == 1, 10.0)
            assert stats.get_message_times_total_miss == misses + 1  # a held pull is a miss
            writes = counting.writes
            send = send_request("Hot", b"arrived %d" % offset, queue_id=0)
            sent, got = await asyncio.wait_for(
                asyncio.gather(client.invoke(addr, send, 10.0), held), 15.0
            )
            assert sent.code == ResponseCode.SUCCESS, sent.remark
            assert got.code == ResponseCode.SUCCESS, got.remark
            assert b"arrived %d" % offset in got.body
            assert got.ext_fields["nextBeginOffset"] == str(offset + 1)
            assert counting.writes == writes + 1


async def test_a_held_pulls_empty_queue_gets_its_consume_queue_file_before_its_first_message(
    tmp_path: Path,
) -> None:
    async with run_broker(tmp_path / "store") as broker, RemotingClient() as client:
        addr = f"127.0.0.1:{broker.port}"
        first = await client.invoke(addr, send_request("Hot", b"create", queue_id=0), 5.0)
        assert first.code == ResponseCode.SUCCESS, first.remark
        store = broker.message_store
        queue_dir = tmp_path / "store" / "consumequeue" / "Hot" / "1"
        assert not queue_dir.exists()
        pull = pull_request("G", "Hot", 1, 0, sys_flag=SUSPEND, suspend_ms=20_000)
        held = asyncio.ensure_future(client.invoke(addr, pull, 30.0))
        # made in a thread while the pull is held, not by the first message's dispatch
        assert await until(
            lambda: store.find_consume_queue("Hot", 1, create=False) is not None, 10.0
        )
        assert [p.name for p in queue_dir.iterdir()] == ["0" * 20]
        assert broker.pull_request_hold_service.held_count == 1
        sent = await client.invoke(addr, send_request("Hot", b"first", queue_id=1), 5.0)
        assert sent.code == ResponseCode.SUCCESS, sent.remark
        answer = await asyncio.wait_for(held, 10.0)
        assert answer.code == ResponseCode.SUCCESS, answer.remark
        assert b"first" in answer.body
        assert answer.ext_fields["nextBeginOffset"] == "1"


async def test_a_flushs_dispatch_runs_at_the_flushs_end_not_in_a_later_loop_iteration(
    tmp_path: Path,
) -> None:
    """A lone send's flush dispatches its records before it returns (after its answers):
    one loop iteration (one epoll_wait) less per flush than a callback of its own."""
    async with run_broker(tmp_path / "store") as broker, RemotingClient() as client:
        addr = f"127.0.0.1:{broker.port}"
        first = await client.invoke(addr, send_request("Hot", b"create", queue_id=0), 5.0)
        assert first.code == ResponseCode.SUCCESS, first.remark
        reput = broker.message_store.reput_service
        await asyncio.to_thread(reput.shutdown)  # from here only the loop dispatches
        store = broker.message_store
        assert await until(lambda: store.dispatch_behind_bytes() == 0, 10.0)
        assert broker.pull_request_hold_service.held_count == 0  # no pull: not inside the put
        batcher = PutBatcher(lambda: store)
        results: list[PutMessageResult] = []
        batcher.submit(PutRequest(new_msg("Hot", 0, b"flushed")), results.append, flush_soon=False)
        batcher.flush()  # no await from here: the loop runs nothing else
        assert [r.status for r in results] == [PutMessageStatus.PUT_OK]
        assert store.dispatch_behind_bytes() == 0
        assert store.get_max_offset_in_queue("Hot", 0) == 2
        # outside a flush a put's run is still the loop's next callback (one a loop iteration)
        store.async_put_each([PutRequest(new_msg("Hot", 0, b"alone"))])
        assert store.dispatch_behind_bytes() > 0
        assert await until(lambda: store.dispatch_behind_bytes() == 0, 10.0)


def test_the_loop_scheduler_holds_only_on_its_loops_thread() -> None:
    loop = asyncio.new_event_loop()
    try:
        scheduler = LoopDispatchScheduler(loop)
        ran: list[int] = []
        assert scheduler.hold()
        assert not scheduler.hold()  # already holding
        assert scheduler(lambda: ran.append(1))
        assert ran == []
        scheduler.release()
        assert ran == [1]
        other: list[bool] = []
        thread = threading.Thread(target=lambda: other.append(scheduler.hold()))
        thread.start()
        thread.join(10.0)
        assert other == [False]
    finally:
        loop.close()
