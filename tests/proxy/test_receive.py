"""ReceiveMessage, ack and change over the gRPC endpoint: redelivery, FIFO, the receive limits."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from tests.proxy.endpoint import Endpoint, run_endpoint


async def receive_until(ep: Endpoint, group: str, topic: str, count: int) -> list[pb.Message]:
    got: list[pb.Message] = []
    async with asyncio.timeout(30):
        while len(got) < count:
            got += (await ep.receive(group, topic, polling_s=5))[1]
    return got


async def test_a_message_not_acked_comes_back_with_attempt_two(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("RedeliverT")
        await ep.send(ep.message("RedeliverT", b"again"))
        (first,) = await receive_until(ep, "GR", "RedeliverT", 1)
        # shorten its invisible time (any 0..12 h on change): it is due again at once
        changed = await ep.stub.ChangeInvisibleDuration(
            spb.ChangeInvisibleDurationRequest(
                group=pb.Resource(name="GR"),
                topic=pb.Resource(name="RedeliverT"),
                receipt_handle=first.system_properties.receipt_handle,
                invisible_duration={"seconds": 1},
                message_id=first.system_properties.message_id,
            ),
            metadata=ep.metadata,
        )
        assert changed.status.code == pb.OK, changed.status
        assert changed.receipt_handle != first.system_properties.receipt_handle
        (second,) = await receive_until(ep, "GR", "RedeliverT", 1)
        assert second.body == b"again"
        assert second.system_properties.delivery_attempt == 2
        # the first handle is spent: its ack is refused as expired
        stale = await ep.ack("GR", "RedeliverT", first)
        assert stale.status.code == pb.INVALID_RECEIPT_HANDLE
        assert (await ep.ack("GR", "RedeliverT", second)).status.code == pb.OK


async def test_fifo_holds_the_next_message_of_a_group_while_one_is_in_flight(
    tmp_path: Path,
) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("FifoT", "FIFO")
        ep.create_group("GF", orderly=True)
        for i in range(3):
            sent = await ep.send(ep.message("FifoT", b"m%d" % i, message_group="g1"))
            assert sent.status.code == pb.OK, sent.status
        responses, first = await ep.receive("GF", "FifoT", batch_size=1)
        assert [m.body for m in first] == [b"m0"]
        assert first[0].system_properties.message_group == "g1"
        responses, held = await ep.receive("GF", "FifoT", batch_size=1, polling_s=5)
        assert held == []
        assert responses[0].status.code == pb.MESSAGE_NOT_FOUND
        assert (await ep.ack("GF", "FifoT", first[0])).status.code == pb.OK
        rest = await receive_until(ep, "GF", "FifoT", 1)
        assert rest[0].body == b"m1"


async def test_receive_refuses_an_invisible_time_under_ten_seconds(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("LimitT")
        responses, got = await ep.receive("GL", "LimitT", invisible_s=5)
        assert got == []
        assert responses[0].status.code == pb.ILLEGAL_INVISIBLE_TIME
        assert responses[-1].HasField("delivery_timestamp")
        bad_sql = pb.FilterExpression(type=pb.SQL, expression="a >")
        responses, _ = await ep.receive("GL", "LimitT", filter_expression=bad_sql)
        assert responses[0].status.code == pb.ILLEGAL_FILTER_EXPRESSION


async def test_tag_filter_delivers_only_matching_messages(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("TagT")
        await ep.send(ep.message("TagT", b"a", tag="A"))
        await ep.send(ep.message("TagT", b"b", tag="B"))
        only_b = pb.FilterExpression(type=pb.TAG, expression="B")
        _, got = await ep.receive("GT", "TagT", filter_expression=only_b)
        assert [m.body for m in got] == [b"b"]


async def test_a_message_past_max_attempts_goes_to_the_dlq_not_the_client(
    tmp_path: Path,
) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("DlqT")
        ep.create_group("GD", retry_max_times=0)  # max_attempts 1
        await ep.send(ep.message("DlqT", b"dead"))
        (first,) = await receive_until(ep, "GD", "DlqT", 1)
        changed = await ep.stub.ChangeInvisibleDuration(
            spb.ChangeInvisibleDurationRequest(
                group=pb.Resource(name="GD"),
                topic=pb.Resource(name="DlqT"),
                receipt_handle=first.system_properties.receipt_handle,
                invisible_duration={"seconds": 1},
                message_id=first.system_properties.message_id,
            ),
            metadata=ep.metadata,
        )
        assert changed.status.code == pb.OK
        store = ep.cluster.broker.message_store
        async with asyncio.timeout(20):
            while store.get_max_offset_in_queue("%DLQ%GD", 0) < 1:
                assert (await ep.receive("GD", "DlqT", polling_s=5))[1] == []
