"""Probing a gRPC endpoint (``rocketq.proxy``) that a command under test started."""

from __future__ import annotations

import grpc

from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb

TIMEOUT_S = 10.0


async def grpc_route_code(port: int, topic: str) -> str:
    """The Code name a QueryRoute of ``topic`` gets from the endpoint on 127.0.0.1:``port``."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        query_route = channel.unary_unary(
            "/apache.rocketmq.v2.MessagingService/QueryRoute",
            request_serializer=spb.QueryRouteRequest.SerializeToString,
            response_deserializer=spb.QueryRouteResponse.FromString,
        )
        response = await query_route(
            spb.QueryRouteRequest(topic=pb.Resource(name=topic)),
            metadata=(("x-mq-client-id", "probe@0"),),
            timeout=TIMEOUT_S,
        )
    return pb.Code.Name(response.status.code)
