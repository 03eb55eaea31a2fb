"""DefaultRequestProcessor: the name server's request handlers (DefaultRequestProcessor.java).

Each handler takes (channel, request) and returns the response; headers that do not parse
raise RemotingCommandError, which the channel answers as SYSTEM_ERROR naming the field.
"""

from __future__ import annotations

import dataclasses
import logging
import zlib

from rocketq.common.java_properties import parse_properties
from rocketq.namesrv.auto_create_route import pickup_auto_create_route
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.kv_config import NAMESPACE_ORDER_TOPIC_CONFIG, KVConfigManager
from rocketq.namesrv.route_info import FLAG_UNIT, FLAG_UNIT_SUB, RouteInfoManager
from rocketq.remoting.channel import RemotingChannel, RequestProcessor
from rocketq.remoting.protocol import headers as h
from rocketq.remoting.protocol import namesrv_headers as nh
from rocketq.remoting.protocol.codes import VERSION_V3_0_11, RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.register_broker_body import (
    RegisterBrokerBody,
    TopicConfigSerializeWrapper,
)
from rocketq.remoting.protocol.topic_route import KVTable, TopicList
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

FAQ_APPLY_TOPIC = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."

Response = RemotingCommand


def _ok(
    remark: str | None = None, *, ext_fields: dict[str, str] | None = None, body: bytes = b""
) -> Response:
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, remark, ext_fields=ext_fields, body=body
    )


class DefaultRequestProcessor:
    def __init__(
        self, config: NamesrvConfig, route_info: RouteInfoManager, kv_config: KVConfigManager
    ) -> None:
        self.config = config
        self.route_info = route_info
        self.kv_config = kv_config

    def register_to(self, server: RemotingServer) -> None:
        handlers: dict[int, RequestProcessor] = {
            RequestCode.PUT_KV_CONFIG: self.put_kv_config,
            RequestCode.GET_KV_CONFIG: self.get_kv_config,
            RequestCode.DELETE_KV_CONFIG: self.delete_kv_config,
            RequestCode.GET_KVLIST_BY_NAMESPACE: self.get_kv_list_by_namespace,
            RequestCode.QUERY_DATA_VERSION: self.query_broker_topic_config,
            RequestCode.REGISTER_BROKER: self.register_broker,
            RequestCode.UNREGISTER_BROKER: self.unregister_broker,
            RequestCode.GET_ROUTEINFO_BY_TOPIC: self.get_route_info_by_topic,
            RequestCode.GET_BROKER_CLUSTER_INFO: self.get_broker_cluster_info,
            RequestCode.WIPE_WRITE_PERM_OF_BROKER: self.wipe_write_perm_of_broker,
            RequestCode.ADD_WRITE_PERM_OF_BROKER: self.add_write_perm_of_broker,
            RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: self.get_all_topic_list,
            RequestCode.DELETE_TOPIC_IN_NAMESRV: self.delete_topic_in_namesrv,
            RequestCode.GET_TOPICS_BY_CLUSTER: self.get_topics_by_cluster,
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS: self.get_system_topic_list,
            RequestCode.GET_UNIT_TOPIC_LIST: self.get_unit_topic_list,
            RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST: self.get_has_unit_sub_topic_list,
            RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: self.get_has_unit_sub_ununit_topics,
            RequestCode.GET_NAMESRV_CONFIG: self.get_config,
            RequestCode.UPDATE_NAMESRV_CONFIG: self.update_config,
        }
        for code, handler in handlers.items():
            server.register_processor(code, handler)

    # ------------------------------------------------------------------ KV config

    async def put_kv_config(self, channel: RemotingChannel, request: RemotingCommand) -> Response:
        header = nh.PutKVConfigRequestHeader.from_ext_fields(request.ext_fields)
        self.kv_config.put_kv_config(header.namespace, header.key, header.value)
        return _ok()

    async def get_kv_config(self, channel: RemotingChannel, request: RemotingCommand) -> Response:
        header = nh.GetKVConfigRequestHeader.from_ext_fields(request.ext_fields)
        value = self.kv_config.get_kv_config(header.namespace, header.key)
        if value is None:
            return RemotingCommand.create_response(
                ResponseCode.QUERY_NOT_FOUND,
                f"No config item, Namespace: {header.namespace} Key: {header.key}",
            )
        return _ok(ext_fields=nh.GetKVConfigResponseHeader(value=value).to_ext_fields())

    async def delete_kv_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = nh.DeleteKVConfigRequestHeader.from_ext_fields(request.ext_fields)
        self.kv_config.delete_kv_config(header.namespace, header.key)
        return _ok()

    async def get_kv_list_by_namespace(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = nh.GetKVListByNamespaceRequestHeader.from_ext_fields(request.ext_fields)
        table = self.kv_config.get_kv_list_by_namespace(header.namespace)
        if table is None:
            return RemotingCommand.create_response(
                ResponseCode.QUERY_NOT_FOUND, f"No config item, Namespace: {header.namespace}"
            )
        return _ok(body=KVTable(table=table).encode())

    # ------------------------------------------------------------------ brokers

    async def register_broker(self, channel: RemotingChannel, request: RemotingCommand) -> Response:
        header = nh.RegisterBrokerRequestHeader.from_ext_fields(request.ext_fields)
        if header.body_crc32 != 0 and header.body_crc32 != zlib.crc32(request.body) & 0x7FFFFFFF:
            log.warning("register from %s: body crc32 does not match", channel.remote_addr)
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, "crc32 not match")
        filter_servers: list[str] | None
        if request.version >= VERSION_V3_0_11:
            body = self._register_body(header, request.body)
            wrapper = body.topic_config_serialize_wrapper
            filter_servers = body.filter_server_list
        else:
            wrapper = (
                TopicConfigSerializeWrapper.decode(request.body)
                if request.body
                else TopicConfigSerializeWrapper()
            )
            filter_servers = None
        result = self.route_info.register_broker(
            cluster_name=header.cluster_name,
            broker_addr=header.broker_addr,
            broker_name=header.broker_name,
            broker_id=header.broker_id,
            ha_server_addr=header.ha_server_addr,
            topic_config_table=wrapper.topic_config_table,
            data_version=wrapper.data_version,
            filter_server_list=filter_servers,
            channel=channel,
            base_version=_base_version(header.base_data_version),
        )
        response_header = nh.RegisterBrokerResponseHeader(
            ha_server_addr=result.ha_server_addr, master_addr=result.master_addr
        )
        order_conf = self.kv_config.get_kv_list_by_namespace(NAMESPACE_ORDER_TOPIC_CONFIG)
        body_bytes = KVTable(table=order_conf).encode() if order_conf else b""
        return _ok(ext_fields=response_header.to_ext_fields(), body=body_bytes)

    @staticmethod
    def _register_body(header: nh.RegisterBrokerRequestHeader, data: bytes) -> RegisterBrokerBody:
        if not data:
            return RegisterBrokerBody(
                topic_config_serialize_wrapper=TopicConfigSerializeWrapper(
                    data_version=DataVersion(timestamp=0, counter=0)
                )
            )
        if header.compressed:
            return RegisterBrokerBody.decode_compressed(data)
        return RegisterBrokerBody.decode(data)

    async def unregister_broker(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = nh.UnRegisterBrokerRequestHeader.from_ext_fields(request.ext_fields)
        self.route_info.unregister_broker(
            cluster_name=header.cluster_name,
            broker_addr=header.broker_addr,
            broker_name=header.broker_name,
            broker_id=header.broker_id,
        )
        return _ok()

    async def query_broker_topic_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = nh.QueryDataVersionRequestHeader.from_ext_fields(request.ext_fields)
        data_version = DataVersion.decode(request.body) if request.body else DataVersion()
        changed = self.route_info.is_broker_topic_config_changed(header.broker_addr, data_version)
        if not changed:
            self.route_info.update_broker_info_update_timestamp(header.broker_addr)
        stored = self.route_info.query_broker_topic_config(header.broker_addr)
        return _ok(
            ext_fields=nh.QueryDataVersionResponseHeader(changed=changed).to_ext_fields(),
            body=stored.encode() if stored is not None else b"",
        )

    async def wipe_write_perm_of_broker(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = nh.WipeWritePermOfBrokerRequestHeader.from_ext_fields(request.ext_fields)
        count = self.route_info.wipe_write_perm_of_broker(header.broker_name)
        return _ok(ext_fields={"wipeTopicCount": str(count)})

    async def add_write_perm_of_broker(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = nh.AddWritePermOfBrokerRequestHeader.from_ext_fields(request.ext_fields)
        count = self.route_info.add_write_perm_of_broker(header.broker_name)
        return _ok(ext_fields={"addTopicCount": str(count)})

    # ------------------------------------------------------------------ routes and topics

    async def get_route_info_by_topic(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = nh.GetRouteInfoRequestHeader.from_ext_fields(request.ext_fields)
        route = self.route_info.pickup_topic_route_data(header.topic)
        if route is None and self.config.auto_create_topic_route_enable:
            route = pickup_auto_create_route(self.route_info, header.topic)
        if route is None:
            return RemotingCommand.create_response(
                ResponseCode.TOPIC_NOT_EXIST,
                f"No topic route info in name server for the topic: {header.topic}"
                + FAQ_APPLY_TOPIC,
            )
        if self.config.order_message_enable:
            route.order_topic_conf = self.kv_config.get_kv_config(
                NAMESPACE_ORDER_TOPIC_CONFIG, header.topic
            )
        return _ok(body=route.encode())

    async def get_broker_cluster_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        return _ok(body=self.route_info.get_all_cluster_info().encode())

    async def get_all_topic_list(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        return _ok(body=TopicList(topic_list=self.route_info.get_all_topic_list()).encode())

    async def delete_topic_in_namesrv(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = h.DeleteTopicFromNamesrvRequestHeader.from_ext_fields(request.ext_fields)
        self.route_info.delete_topic(header.topic)
        return _ok()

    async def get_topics_by_cluster(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        header = h.GetTopicsByClusterRequestHeader.from_ext_fields(request.ext_fields)
        topics = self.route_info.get_topics_by_cluster(header.cluster)
        return _ok(body=TopicList(topic_list=topics).encode())

    async def get_system_topic_list(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        topics, addr = self.route_info.get_system_topic_list()
        return _ok(body=TopicList(topic_list=topics, broker_addr=addr).encode())

    async def get_unit_topic_list(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        topics = self.route_info.get_topics_by_sys_flag(lambda f: bool(f & FLAG_UNIT))
        return _ok(body=TopicList(topic_list=topics).encode())

    async def get_has_unit_sub_topic_list(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        topics = self.route_info.get_topics_by_sys_flag(lambda f: bool(f & FLAG_UNIT_SUB))
        return _ok(body=TopicList(topic_list=topics).encode())

    async def get_has_unit_sub_ununit_topics(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> Response:
        topics = self.route_info.get_topics_by_sys_flag(
            lambda f: not f & FLAG_UNIT and bool(f & FLAG_UNIT_SUB)
        )
        return _ok(body=TopicList(topic_list=topics).encode())

    # ------------------------------------------------------------------ config

    async def get_config(self, channel: RemotingChannel, request: RemotingCommand) -> Response:
        """The config as Java properties text (``key=value`` lines, RocketMQ's key names)."""
        lines = [f"{k}={v}" for k, v in config_properties(self.config).items()]
        return _ok(body="\n".join(lines).encode())

    async def update_config(self, channel: RemotingChannel, request: RemotingCommand) -> Response:
        """Apply ``key=value`` lines; only orderMessageEnable changes at run time."""
        try:
            updates = parse_properties(request.body.decode())
        except UnicodeDecodeError:
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, "body is not UTF-8")
        if CONFIG_BLACK_LIST & updates.keys():
            return RemotingCommand.create_response(
                ResponseCode.NO_PERMISSION, "Can not update config in black list."
            )
        if "orderMessageEnable" in updates:
            enable = updates["orderMessageEnable"].strip().lower() == "true"
            self.config = dataclasses.replace(self.config, order_message_enable=enable)
        return _ok()


def _base_version(text: str | None) -> DataVersion | None:
    """An incremental registration's base (rocketq's ``baseDataVersion``); one that does not
    parse chains on nothing, which leaves the broker's version unknown (the full table next)."""
    if text is None:
        return None
    try:
        return DataVersion.decode(text.encode())
    except ValueError:  # RemotingCommandError: not a DataVersion
        return UNPARSED_BASE


UNPARSED_BASE = DataVersion(timestamp=-1, counter=-1)

CONFIG_BLACK_LIST = frozenset({"configBlackList", "configStorePath", "kvConfigPath"})


def config_properties(config: NamesrvConfig) -> dict[str, str]:
    return {
        "listenPort": str(config.listen_port),
        "scanNotActiveBrokerInterval": str(config.scan_not_active_broker_interval_ms),
        "orderMessageEnable": "true" if config.order_message_enable else "false",
        "kvConfigPath": config.kv_config_path or "",
        "serverChannelMaxIdleTimeSeconds": str(int(config.server_channel_max_idle_time_s)),
    }
