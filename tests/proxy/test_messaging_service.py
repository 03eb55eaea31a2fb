"""The gRPC endpoint against a real name server and broker, driven with rocketq's own stubs."""

from __future__ import annotations

from pathlib import Path

from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from tests.proxy.endpoint import run_endpoint


async def test_route_lists_the_topics_queues_with_the_requests_endpoints(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("RouteT", "FIFO", queues=3)
        response = await ep.stub.QueryRoute(
            spb.QueryRouteRequest(topic=pb.Resource(name="RouteT"), endpoints=ep.endpoints),
            metadata=ep.metadata,
        )
        assert response.status.code == pb.OK
        queues = response.message_queues
        assert [q.id for q in queues] == [0, 1, 2]
        assert {q.permission for q in queues} == {pb.READ_WRITE}
        assert all(list(q.accept_message_types) == [pb.FIFO] for q in queues)
        assert queues[0].broker.endpoints == ep.endpoints


async def test_send_then_receive_and_ack(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.create_topic("SendT")
        msg = ep.message("SendT", b"hello", tag="TagA", keys=["k1", "k2"])
        msg.user_properties["color"] = "red"
        sent = await ep.send(msg)
        assert sent.status.code == pb.OK, sent.status
        assert sent.entries[0].message_id == msg.system_properties.message_id
        responses, got = await ep.receive("G1", "SendT")
        assert responses[0].status.code == pb.OK
        assert responses[-1].HasField("delivery_timestamp")
        assert len(got) == 1
        m = got[0]
        assert m.body == b"hello"
        assert m.system_properties.tag == "TagA"
        assert list(m.system_properties.keys) == ["k1", "k2"]
        assert dict(m.user_properties) == {"color": "red"}
        assert m.system_properties.message_id == msg.system_properties.message_id
        assert m.system_properties.delivery_attempt == 1
        ack = await ep.stub.AckMessage(
            spb.AckMessageRequest(
                group=pb.Resource(name="G1"),
                topic=pb.Resource(name="SendT"),
                entries=[
                    spb.AckMessageEntry(
                        message_id=m.system_properties.message_id,
                        receipt_handle=m.system_properties.receipt_handle,
                    )
                ],
            ),
            metadata=ep.metadata,
        )
        assert ack.status.code == pb.OK, ack.status
