"""rocketq.remoting: RocketMQ's remoting protocol (shared/spec/remoting.md).

Modules:
    codes        RequestCode, ResponseCode, LanguageCode, SerializeType, version ordinals
    command      RemotingCommand (create_request / create_response / response_to), flag bits
    codec        encode(cmd) -> bytes, decode(frame), sans-IO FrameDecoder (JSON + ROCKETMQ headers)
    header_base  CommandCustomHeader: typed extFields (from_ext_fields / to_ext_fields)
    headers      the request/response header classes
    register_broker_body  TopicConfigSerializeWrapper, RegisterBrokerBody (also compressed)
    topic_route  QueueData, BrokerData, TopicRouteData, ClusterInfo, TopicList, KVTable, MASTER_ID
    bodies       HeartbeatData, ConsumerData, LockBatch*, ConsumerListBody
    channel      RemotingChannel (one connection, opaque-matched futures), ProcessorTable
    server       RemotingServer (asyncio)
    client       RemotingClient (asyncio, connection per address, name-server selection)
    acl          ACL 1.0 request signing and verification
"""

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codec import FrameDecoder, decode, encode
from rocketq.remoting.codes import LanguageCode, RequestCode, ResponseCode, SerializeType
from rocketq.remoting.command import RemotingCommand
from rocketq.remoting.server import RemotingServer

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
