"""rocketmq_rpc_latency of the gRPC endpoint, by RPC name and response Code."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from rocketq.proxy.metrics import GrpcMetricsCollector
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from tests.proxy.endpoint import run_endpoint


async def test_each_rpc_is_counted_with_its_response_code(tmp_path: Path) -> None:
    async with run_endpoint(tmp_path) as ep:
        await ep.stub.QueryRoute(
            spb.QueryRouteRequest(topic=pb.Resource(name="NoSuchT")), metadata=ep.metadata
        )
        await ep.create_topic("MetricT")
        await ep.receive("GM", "MetricT", polling_s=5)
        registry = CollectorRegistry()
        registry.register(
            GrpcMetricsCollector(ep.server.service.stats, ("DefaultCluster", "proxy", "p1"))
        )
        text = generate_latest(registry).decode()
    assert (
        'rocketmq_rpc_latency_count{cluster="DefaultCluster",is_long_polling="false",'
        'node_id="p1",node_type="proxy",protocol_type="grpc",request_code="QueryRoute",'
        'response_code="TOPIC_NOT_FOUND"} 1.0'
    ) in text
    assert 'request_code="ReceiveMessage",response_code="MESSAGE_NOT_FOUND"} 1.0' in text
