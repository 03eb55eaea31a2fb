"""Sends of one loop iteration stored together, each answered with its own result."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketq.broker.put_batcher import PutBatcher
from rocketq.common.message_decoder import decode_message
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import SendMessageResponseHeader
from rocketq.response_code import ResponseCode
from rocketq.store import FlushDiskType
from rocketq.store.message_writer import PutRequest
from rocketq.store.results import PutMessageResult, PutMessageStatus
from rocketq.testing.broker import run_broker
from rocketq.testing.store import MIB, new_msg, open_store, small_store_properties
from rocketq.testing.wire import send_request

pytestmark = pytest.mark.timeout(60)

WAIT_S = 10.0
SMALL = small_store_properties(MIB)


async def burst(addr: str, requests: list[RemotingCommand]) -> list[RemotingCommand]:
    """Send every request at once on one connection (they arrive in one or few reads)."""
    async with RemotingClient() as client:
        return list(await asyncio.gather(*(client.invoke(addr, r, WAIT_S) for r in requests)))


async def test_a_burst_of_sends_gets_consecutive_offsets_and_the_properties_as_sent(
    tmp_path: Path,
) -> None:
    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        requests = [
            send_request(
                "Burst", b"m%d" % i, tags="t", keys=f"k{i}", code=RequestCode.SEND_MESSAGE_V2
            )
            for i in range(32)
        ]
        responses = await burst(broker.broker_addr, requests)
        assert [r.code for r in responses] == [ResponseCode.SUCCESS] * 32
        offsets = sorted(
            SendMessageResponseHeader.from_ext_fields(r.ext_fields).queue_offset for r in responses
        )
        assert offsets == list(range(32))
        store = broker.message_store
        assert store.wait_for_dispatch(WAIT_S)
        got = store.get_message("g", "Burst", 0, 0, 32)
        msgs = [decode_message(b) for b in got.message_buffers]
        assert sorted(m.body for m in msgs) == sorted(b"m%d" % i for i in range(32))
        props = msgs[0].properties
        assert props["TAGS"] == "t"
        assert props["CLUSTER"] == broker.config.broker_cluster_name
        assert "WAIT" not in props  # read for the flush rule, not stored


async def test_a_send_the_store_refuses_spoils_no_other_send_of_its_burst(tmp_path: Path) -> None:
    async with run_broker(tmp_path, store_properties=SMALL) as broker:
        # within the 32,767-byte header check, over it once the broker appends CLUSTER
        too_long = {"BIG": "v" * (32_767 - len("WAIT\x01true\x02BIG\x01\x02"))}
        requests = [send_request("Mixed", b"ok%d" % i) for i in range(8)]
        requests.insert(4, send_request("Mixed", b"bad", extra=too_long))
        responses = await burst(broker.broker_addr, requests)
        codes = [r.code for r in responses]
        assert codes[4] == ResponseCode.MESSAGE_ILLEGAL
        assert "properties length limit 32k" in (responses[4].remark or "")  # the store's
        assert codes[:4] + codes[5:] == [ResponseCode.SUCCESS] * 8


async def test_sync_flush_sends_of_a_burst_are_answered_after_their_group_commit(
    tmp_path: Path,
) -> None:
    store_props = {**SMALL, "flushDiskType": "SYNC_FLUSH"}
    async with run_broker(tmp_path, store_properties=store_props) as broker:
        requests = [send_request("Durable", b"d%d" % i) for i in range(16)]
        requests.append(send_request("Durable", b"nowait", extra={"WAIT": "false"}))
        responses = await burst(broker.broker_addr, requests)
        assert [r.code for r in responses] == [ResponseCode.SUCCESS] * 17
        end = broker.message_store.get_max_phy_offset()
        assert broker.message_store.commit_log.mapped_file_queue.flushed_where >= end - 200


async def test_puts_submitted_in_one_iteration_go_to_the_store_in_one_call(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    try:
        batcher = PutBatcher(lambda: store)
        results: dict[int, PutMessageResult] = {}
        done = asyncio.Event()
        for i in range(10):
            msg = new_msg(body=b"b%d" % i, queue_id=-1 if i == 3 else 0)

            def record(result: PutMessageResult, i: int = i) -> None:
                results[i] = result
                if len(results) == 10:
                    done.set()

            batcher.submit(PutRequest(msg), record)
        async with asyncio.timeout(WAIT_S):
            await done.wait()
        assert (batcher.flushes, batcher.puts) == (1, 10)
        assert results[3].status is PutMessageStatus.MESSAGE_ILLEGAL
        ok = [results[i] for i in range(10) if i != 3]
        assert all(r.status is PutMessageStatus.PUT_OK for r in ok)
        offsets = [r.append_result.queue_offset for r in ok if r.append_result is not None]
        assert offsets == list(range(9))
    finally:
        store.shutdown()


async def test_the_puts_of_several_reads_in_one_iteration_are_stored_by_one_flush(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path, flush_disk_type=FlushDiskType.ASYNC_FLUSH)
    try:
        batcher = PutBatcher(lambda: store)
        results: list[PutMessageResult] = []
        done = asyncio.Event()

        def record(result: PutMessageResult) -> None:
            results.append(result)
            if len(results) == 8:
                done.set()

        for i in range(8):  # eight connections' reads, one send each, as at sync 32
            batcher.submit(PutRequest(new_msg(body=b"r%d" % i)), record, flush_soon=False)
            batcher.flush_soon()  # each read's end hook
        async with asyncio.timeout(WAIT_S):
            await done.wait()
        assert (batcher.flushes, batcher.puts) == (1, 8)
        assert [r.status for r in results] == [PutMessageStatus.PUT_OK] * 8
    finally:
        store.shutdown()
