"""GET_BROKER_CONFIG (26) and UPDATE_BROKER_CONFIG (25) of AdminBrokerProcessor."""

from __future__ import annotations

import json
import logging

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.configuration import (
    ConfigUpdateRefused,
    Configuration,
    string_to_properties,
)
from rocketq.errors import ConfigError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import GetBrokerConfigResponseHeader
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)


class BrokerConfigProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller
        self.configuration = Configuration(controller)

    def register(self) -> None:
        s = self.broker.remoting_server
        s.register_processor(RequestCode.GET_BROKER_CONFIG, self.get_broker_config)
        s.register_processor(RequestCode.UPDATE_BROKER_CONFIG, self.update_broker_config)

    async def get_broker_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        version = json.dumps(self.configuration.data_version_json(), separators=(",", ":"))
        header = GetBrokerConfigResponseHeader(version=version)
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS,
            ext_fields=header.to_ext_fields(),
            body=self.configuration.all_configs_format_string().encode(),
        )

    async def update_broker_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        try:
            props = string_to_properties(request.body.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, f"string2Properties error: {exc}"
            )
        log.info("updateBrokerConfig from %s: %s", channel.remote_addr, props)
        try:
            self.configuration.update(props)
        except ConfigUpdateRefused as exc:
            code = ResponseCode.NO_PERMISSION if exc.black_listed else ResponseCode.SYSTEM_ERROR
            return RemotingCommand.create_response(code, str(exc))
        except ConfigError as exc:
            return RemotingCommand.create_response(ResponseCode.SYSTEM_ERROR, str(exc))
        if "brokerPermission" in props:
            self.broker.topic_config_manager.data_version.next_version()
            await self.broker.register_broker_all()
        return RemotingCommand.create_response(ResponseCode.SUCCESS)
