"""Message trace (RocketMQ's client/trace): records of who sent and who consumed a message,
encoded as TraceDataEncoder does and sent in batches to the trace topic."""

from rocketq.client.trace.context import (
    ConsumeReturnType,
    MessageType,
    TraceBean,
    TraceContext,
    TraceType,
)
from rocketq.client.trace.encoder import decode_trace_data, encode_trace_context
from rocketq.client.trace.view import TraceView, decode_trace_views

__all__ = [
    "ConsumeReturnType",
    "MessageType",
    "TraceBean",
    "TraceContext",
    "TraceType",
    "TraceView",
    "decode_trace_data",
    "decode_trace_views",
    "encode_trace_context",
]
