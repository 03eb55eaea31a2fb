"""ControllerRequestProcessor: BROKER_HEARTBEAT (904) and the controller requests 1001-1013
(RocketMQ 5's ``controller/processor/ControllerRequestProcessor``).

Each request is decoded here and served through the ``ControllerManager``: reads
(CONTROLLER_GET_REPLICA_INFO, CONTROLLER_GET_SYNC_STATE_DATA, CONTROLLER_GET_NEXT_BROKER_ID)
behind a read barrier, writes (alter SyncStateSet, elect, register, apply id, clean) through
the log, both only on the serving leader (else CONTROLLER_NOT_LEADER, 2007). A heartbeat,
CONTROLLER_GET_METADATA_INFO and the two config requests are answered by any controller, as
in RocketMQ. Every request is counted in ``rocketmq_request_total`` by status (``success``:
answered, whatever the code; ``timeout``: the log did not commit in 5 s, answered SYSTEM_ERROR;
``failed``: the processor raised, which the channel answers SYSTEM_ERROR) and, once answered,
timed in ``rocketmq_request_latency``.

UPDATE_CONTROLLER_CONFIG refuses the keys of the black list (``configBlackList``,
``configStorePath``, ``rocketmqHome`` and the configured ``configBlackList``) with
NO_PERMISSION, as RocketMQ does since CVE-2023-37582; the keys it can change at run time take
effect at once and the whole config is persisted to ``configStorePath`` (RocketMQ's
``Configuration.persist``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from rocketq.common.java_properties import parse_properties
from rocketq.controller.manager import ControllerManager
from rocketq.controller.metrics import RequestHandleStatus
from rocketq.controller.registration import (
    apply_broker_id,
    clean_broker_data,
    get_next_broker_id,
    get_replica_info,
    get_sync_state_data,
    register_broker,
)
from rocketq.controller.request_handler import alter_sync_state_set
from rocketq.controller.server import ControllerServer
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.controller_bodies import BrokerNameList, SyncStateSet
from rocketq.remoting.protocol.controller_headers import (
    AlterSyncStateSetRequestHeader,
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    CleanControllerBrokerDataRequestHeader,
    ElectMasterRequestHeader,
    GetNextBrokerIdRequestHeader,
    GetReplicaInfoRequestHeader,
    RegisterBrokerToControllerRequestHeader,
)
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

Handler = Callable[[RemotingChannel, RemotingCommand], Awaitable[RemotingCommand]]
#: ControllerRequestProcessor.initConfigBlackList's fixed part
FIXED_BLACK_LIST = frozenset({"configBlackList", "configStorePath", "rocketmqHome"})


def _response(code: int, remark: str | None = None, body: bytes = b"") -> RemotingCommand:
    return RemotingCommand.create_response(code, remark, body=body)


class ControllerRequestProcessor:
    def __init__(self, manager: ControllerManager) -> None:
        self.manager = manager
        configured = manager.config.config_black_list.split(";")
        self.config_black_list = FIXED_BLACK_LIST | {k.strip() for k in configured if k.strip()}
        self.handlers: dict[int, Handler] = {
            RequestCode.BROKER_HEARTBEAT: self.broker_heartbeat,
            RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET: self.alter_sync_state_set,
            RequestCode.CONTROLLER_ELECT_MASTER: self.elect_master,
            RequestCode.CONTROLLER_REGISTER_BROKER: self.register_broker,
            RequestCode.CONTROLLER_GET_REPLICA_INFO: self.get_replica_info,
            RequestCode.CONTROLLER_GET_METADATA_INFO: self.get_metadata_info,
            RequestCode.CONTROLLER_GET_SYNC_STATE_DATA: self.get_sync_state_data,
            RequestCode.UPDATE_CONTROLLER_CONFIG: self.update_controller_config,
            RequestCode.GET_CONTROLLER_CONFIG: self.get_controller_config,
            RequestCode.CLEAN_BROKER_DATA: self.clean_broker_data,
            RequestCode.CONTROLLER_GET_NEXT_BROKER_ID: self.get_next_broker_id,
            RequestCode.CONTROLLER_APPLY_BROKER_ID: self.apply_broker_id,
        }

    def register_to(self, server: ControllerServer) -> None:
        for code in self.handlers:
            server.register_processor(code, self.process_request)

    async def process_request(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        started = time.perf_counter_ns()
        metrics = self.manager.metrics
        try:
            response = await self.handlers[request.code](channel, request)
        except TimeoutError:
            metrics.on_request(request.code, RequestHandleStatus.TIMEOUT, 0)
            remark = f"the controller log did not commit request {request.code} in time"
            return _response(ResponseCode.SYSTEM_ERROR, remark)
        except Exception:
            metrics.on_request(request.code, RequestHandleStatus.FAILED, 0)
            raise
        elapsed_us = (time.perf_counter_ns() - started) // 1000
        metrics.on_request(request.code, RequestHandleStatus.SUCCESS, elapsed_us)
        return response

    # ---- liveness and metadata (any controller) --------------------------------------------

    async def broker_heartbeat(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = BrokerHeartbeatRequestHeader.from_ext_fields(request.ext_fields)
        if h.broker_id is None:
            return _response(
                ResponseCode.CONTROLLER_INVALID_REQUEST, "Heart beat with empty brokerId"
            )
        self.manager.heartbeats.on_broker_heartbeat(
            self.manager.clock(),
            cluster_name=h.cluster_name,
            broker_name=h.broker_name,
            broker_addr=h.broker_addr,
            broker_id=h.broker_id,
            timeout_ms=h.heartbeat_timeout_mills,
            channel=channel,
            epoch=h.epoch,
            max_offset=h.max_offset,
            confirm_offset=h.confirm_offset,
            election_priority=h.election_priority,
        )
        return _response(ResponseCode.SUCCESS, "Heart beat success")

    async def get_metadata_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        fields = self.manager.metadata().to_ext_fields()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, ext_fields=fields)

    # ---- the replicated state (serving leader) -----------------------------------------------

    async def alter_sync_state_set(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        header = AlterSyncStateSetRequestHeader.from_ext_fields(request.ext_fields)
        proposed = SyncStateSet.decode(request.body)
        m = self.manager
        return await m.write(lambda: alter_sync_state_set(m.state, header, proposed, m.alive()))

    async def elect_master(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        return await self.manager.elect(
            ElectMasterRequestHeader.from_ext_fields(request.ext_fields)
        )

    async def register_broker(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        header = RegisterBrokerToControllerRequestHeader.from_ext_fields(request.ext_fields)
        m = self.manager
        return await m.write(lambda: register_broker(m.state, header, m.alive()))

    async def get_replica_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        header = GetReplicaInfoRequestHeader.from_ext_fields(request.ext_fields)
        return await self.manager.read(lambda: get_replica_info(self.manager.state, header))

    async def get_sync_state_data(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        names = BrokerNameList.decode(request.body).names if request.body else []
        if not names:  # RocketMQ answers createResponseCommand(null): no code set
            return _response(ResponseCode.SYSTEM_ERROR, "not set any response code")
        m = self.manager
        return await m.read(lambda: get_sync_state_data(m.state, names, m.alive()))

    async def clean_broker_data(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        header = CleanControllerBrokerDataRequestHeader.from_ext_fields(request.ext_fields)
        m = self.manager
        return await m.write(lambda: clean_broker_data(m.state, header, m.alive()))

    async def get_next_broker_id(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        header = GetNextBrokerIdRequestHeader.from_ext_fields(request.ext_fields)
        return await self.manager.read(lambda: get_next_broker_id(self.manager.state, header))

    async def apply_broker_id(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        header = ApplyBrokerIdRequestHeader.from_ext_fields(request.ext_fields)
        return await self.manager.write(lambda: apply_broker_id(self.manager.state, header))

    # ---- config (this controller) ------------------------------------------------------------

    async def get_controller_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        return _response(ResponseCode.SUCCESS, body=self._config_text().encode())

    async def update_controller_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        log.info("updateConfig called by %s", channel.remote_addr)
        try:
            updates = parse_properties(request.body.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return _response(ResponseCode.SYSTEM_ERROR, f"UnsupportedEncodingException {exc}")
        if self.config_black_list & updates.keys():
            return _response(ResponseCode.NO_PERMISSION, "Can not update config in black list.")
        self.manager.config = self.manager.config.with_properties(updates)
        await asyncio.to_thread(
            _persist, Path(self.manager.config.config_store_path), self._config_text()
        )
        return _response(ResponseCode.SUCCESS)

    def _config_text(self) -> str:
        return "".join(f"{k}={v}\n" for k, v in self.manager.config.to_properties().items())


def _persist(path: Path, text: str) -> None:
    """Configuration.persist: the file replaced whole (temp file, fsync, rename)."""
    path = path.expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp")
    with open(temp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)
