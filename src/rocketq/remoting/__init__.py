"""rocketq.remoting: RocketMQ's remoting layer, transport here and protocol in ``protocol/``.

Transport (how commands move; RocketMQ's ``remoting/netty``):
    codec            encode(cmd) -> bytes, decode(frame), the sans-IO FrameDecoder
    channel          RemotingChannel (one connection, opaque-matched futures), ProcessorTable
    channel_requests, channel_writer   the channel's pending requests and its frame writer
    server           RemotingServer (asyncio)
    client           RemotingClient (asyncio, connection per address, name-server selection)
    event_loop       the loop kind (uvloop when present) and how blocking code runs one
    acl              ACL 1.0 request signing and verification (AclClientRPCHook, AclUtils)
    rpc_stats, metrics_exporter        per-code RPC latency and its Prometheus exporter

Protocol (what the commands say; RocketMQ's ``remoting/protocol``), in ``protocol/``:
    command          RemotingCommand (create_request / create_response / response_to), flag bits
    codes            RequestCode, LanguageCode, SerializeType, version ordinals
    custom_header    CommandCustomHeader: typed extFields (from_ext_fields / to_ext_fields)
    headers          every request/response header
    json_body        JsonBody: bodies derived from dataclass fields (RemotingSerializable)
    fastjson         fastjson's JSON dialect: bare and object keys, the pretty form
    bodies, admin_bodies, consumer_bodies, group_bodies, acl_bodies, stats_bodies
    topic_route      QueueData, BrokerData, TopicRouteData, ClusterInfo, TopicList, KVTable
    register_broker_body  TopicConfigSerializeWrapper, RegisterBrokerBody (also compressed)
    data_version     DataVersion; subscription: SubscriptionData and FilterAPI

ResponseCode is ``rocketq.response_code`` (below this package and ``rocketq.errors``).
"""

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codec import FrameDecoder, decode, encode
from rocketq.remoting.protocol.codes import LanguageCode, RequestCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode

__all__ = [
    "FrameDecoder",
    "LanguageCode",
    "RemotingClient",
    "RemotingCommand",
    "RemotingServer",
    "RequestCode",
    "ResponseCode",
    "SerializeType",
    "decode",
    "encode",
]
