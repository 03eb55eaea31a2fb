"""AdminBrokerProcessor (topic administration and runtime info) and QueryMessageProcessor
(VIEW_MESSAGE_BY_ID, QUERY_MESSAGE).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from dataclasses import replace

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.metadata_acks import TOPIC_DATA_VERSION, TOPIC_SYNC_WAIT_S, parse_version
from rocketq.broker.runtime_info import broker_runtime_info
from rocketq.broker.topic_config_feed import MAX_WAIT_MS, TOPIC_CONFIG_CHANGES, TOPIC_WAIT_MILLIS
from rocketq.common.attribute import (
    ADD_SIGN,
    TOPIC_MESSAGE_TYPE_ATTRIBUTE,
    AttributeRefusedError,
    TopicMessageType,
    parse_to_map,
)
from rocketq.common.topic import validate_topic
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.admin_bodies import CreateTopicListRequestBody
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    CreateTopicRequestHeader,
    DeleteTopicRequestHeader,
    QueryMessageRequestHeader,
    QueryMessageResponseHeader,
    ViewMessageRequestHeader,
)
from rocketq.remoting.protocol.topic_route import KVTable
from rocketq.response_code import ResponseCode
from rocketq.store.config import BrokerRole

DEFAULT_QUERY_MAX_NUM = 32
MIXED_REFUSED = "MIXED message type is not supported."
#: a create of at most this many topics runs on the loop unless it waits for an fsync (a
#: thread hop cost 5-35 ms at p99 on a busy machine); larger batches encode in a thread
INLINE_CREATE_MAX = 16


def _error(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)


class AdminBrokerProcessor:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller

    def register(self) -> None:
        s = self.broker.remoting_server
        s.register_processor(RequestCode.UPDATE_AND_CREATE_TOPIC, self.update_and_create_topic)
        s.register_processor(
            RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, self.update_and_create_topic_list
        )
        s.register_processor(RequestCode.DELETE_TOPIC_IN_BROKER, self.delete_topic)
        s.register_processor(RequestCode.GET_ALL_TOPIC_CONFIG, self.get_all_topic_config)
        s.register_processor(RequestCode.GET_BROKER_RUNTIME_INFO, self.get_broker_runtime_info)
        s.register_processor(RequestCode.VIEW_MESSAGE_BY_ID, self.view_message_by_id)
        s.register_processor(RequestCode.QUERY_MESSAGE, self.query_message)

    async def update_and_create_topic(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        refused = self._refuse_on_slave()
        if refused is not None:
            return refused
        h = CreateTopicRequestHeader.from_ext_fields(request.ext_fields)
        refused_topic = self._refuse_topic(h.topic)
        if refused_topic is not None:
            return refused_topic
        tc = TopicConfig(
            topic_name=h.topic,
            read_queue_nums=h.read_queue_nums,
            write_queue_nums=h.write_queue_nums,
            perm=h.perm,
            topic_filter_type=h.topic_filter_type,
            topic_sys_flag=h.topic_sys_flag or 0,
            order=h.order,
        )
        try:
            modification = parse_to_map(h.attributes)
        except AttributeRefusedError as exc:
            return _error(ResponseCode.SYSTEM_ERROR, str(exc))
        return await self._create_topics([(tc, modification)], h.topic)

    async def update_and_create_topic_list(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        """UPDATE_AND_CREATE_TOPIC_LIST (18): RocketMQ 5's AdminBrokerProcessor
        .updateAndCreateTopicList. Every topic is validated first (one bad name refuses the
        batch); each config's ``attributes`` is its attribute change, as in code 17; the batch
        is one journal append and one incremental registration. Unlike RocketMQ, a topic that
        is unchanged does not end the batch early: the others are still created."""
        refused = self._refuse_on_slave()
        if refused is not None:
            return refused
        if not request.body:
            return _error(ResponseCode.SYSTEM_ERROR, "the topic config list body is missing")
        try:
            configs = CreateTopicListRequestBody.decode(request.body).topic_config_list
        except (ValueError, TypeError, KeyError) as exc:
            return _error(ResponseCode.SYSTEM_ERROR, f"bad topic config list: {exc}")
        items: list[tuple[TopicConfig, Mapping[str, str]]] = []
        for tc in configs:
            reason = self._refuse_topic(tc.topic_name)
            if reason is not None:
                return reason
            items.append((replace(tc, attributes=None), dict(tc.attributes or {})))
        names = ";".join(tc.topic_name for tc in configs)
        return await self._create_topics(items, names)

    def _refuse_topic(self, topic: str) -> RemotingCommand | None:
        reason = validate_topic(topic)
        if reason is not None:
            return _error(ResponseCode.SYSTEM_ERROR, reason)
        if topic == self.broker.config.broker_cluster_name:
            return _error(
                ResponseCode.SYSTEM_ERROR,
                f"the topic[{topic}] is conflict with system reserved words.",
            )
        return None

    async def _create_topics(
        self, items: list[tuple[TopicConfig, Mapping[str, str]]], what: str
    ) -> RemotingCommand:
        """Store the configs (one fsynced journal append), register only them with the name
        servers (registerIncrementBrokerData), and in controller mode wait for the in-sync
        slaves."""
        for _, modification in items:
            if not self.broker.config.enable_mixed_message_type and (
                modification.get(ADD_SIGN + TOPIC_MESSAGE_TYPE_ATTRIBUTE.name)
                == TopicMessageType.MIXED.value
            ):
                return _error(ResponseCode.INVALID_PARAMETER, MIXED_REFUSED)
        manager = self.broker.topic_config_manager
        try:
            if manager.sync_flush or len(items) > INLINE_CREATE_MAX:
                stored, version = await asyncio.to_thread(
                    manager.update_topic_configs_by_request, items
                )
            else:  # a write to the page cache and ~0.1 ms of encoding: no thread hop
                stored, version = manager.update_topic_configs_by_request(items)
        except AttributeRefusedError as exc:  # AdminBrokerProcessor.updateAndCreateTopic
            return _error(ResponseCode.SYSTEM_ERROR, str(exc))
        target = (version.state_version_or_zero, version.counter)
        _, late = await asyncio.gather(  # the name servers and the slaves at the same time
            self.broker.register_increment_broker_data(stored, version),
            self.broker.slave_version_acks.wait_for(target, TOPIC_SYNC_WAIT_S),
        )
        if late:  # controller mode: answered once the in-sync slaves have it (metadata_acks)
            return _error(
                ResponseCode.SYSTEM_ERROR,
                f"topic {what} is created on the master, but in-sync slaves {late} did "
                f"not confirm it within {TOPIC_SYNC_WAIT_S:g} s; a failover now may lose it",
            )
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    async def delete_topic(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        refused = self._refuse_on_slave()
        if refused is not None:
            return refused
        h = DeleteTopicRequestHeader.from_ext_fields(request.ext_fields)
        await asyncio.to_thread(self.broker.topic_config_manager.delete_topic_config, h.topic)
        self.broker.consumer_offset_manager.clean_offset_by_topic(h.topic)
        self.broker.broker_stats_manager.on_topic_deleted(h.topic)
        # the store keeps the topic's consume queue files until they expire: it has no
        # deleteTopics yet
        await self.broker.register_broker_all()
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    def _refuse_on_slave(self) -> RemotingCommand | None:
        """A slave's topics come from its master (SlaveSynchronize): changes go there."""
        if self.broker.config.broker_role is not BrokerRole.SLAVE:
            return None
        return _error(
            ResponseCode.SYSTEM_ERROR,
            "Can't modify topic or subscription group from slave broker, "
            "please execute it from master broker.",
        )

    async def get_all_topic_config(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        fields = request.ext_fields or {}
        self.broker.slave_version_acks.note(fields)
        theirs = fields.get(TOPIC_DATA_VERSION)
        if theirs is not None:  # a controller-mode slave's poll (topic_config_feed)
            wait = fields.get(TOPIC_WAIT_MILLIS) or "0"
            wait_ms = min(int(wait), MAX_WAIT_MS) if wait.isdigit() else 0
            answer = await self._answer_slave_poll(theirs, wait_ms)
            if answer is not None:
                return RemotingCommand.create_response(ResponseCode.SUCCESS, body=answer)
        body = self.broker.topic_config_manager.build_serialize_wrapper().encode()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=body)

    async def _answer_slave_poll(self, theirs: str, wait_ms: int) -> bytes | None:
        """Held up to ``wait_ms`` while the table is at the slave's version ``theirs``; then
        the version alone (unmoved), the changes since it (the feed holds them all), or None
        (the whole table)."""
        manager = self.broker.topic_config_manager
        deadline = time.monotonic() + wait_ms / 1000
        while True:
            changed = manager.feed.changed_event()  # taken before the check: no change slips
            mine = manager.version_snapshot().to_json()
            if fastjson.dumps(mine).decode("utf-8") != theirs:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                return fastjson.dumps({"dataVersion": mine})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), left)
        version = parse_version(theirs)
        since = manager.feed.changes_since(*version) if version is not None else None
        if since is None:
            return None
        records, after = since
        return fastjson.dumps({"dataVersion": after, TOPIC_CONFIG_CHANGES: records})

    async def get_broker_runtime_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        table = await asyncio.to_thread(broker_runtime_info, self.broker)
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, body=KVTable(table=table).encode()
        )

    async def view_message_by_id(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ViewMessageRequestHeader.from_ext_fields(request.ext_fields)
        record = await asyncio.to_thread(
            self.broker.message_store.select_one_message_by_offset, h.offset
        )
        if record is None:
            return _error(
                ResponseCode.SYSTEM_ERROR, f"can not find message by the offset, {h.offset}"
            )
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=record)

    async def query_message(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = QueryMessageRequestHeader.from_ext_fields(request.ext_fields)
        max_num = h.max_num
        if request.ext_fields.get("_UNIQUE_KEY_QUERY") == "true":
            max_num = DEFAULT_QUERY_MAX_NUM
        result = await asyncio.to_thread(
            self.broker.message_store.query_message,
            h.topic,
            h.key,
            max_num,
            h.begin_timestamp,
            h.end_timestamp,
        )
        body = b"".join(result.message_buffer_list)
        if not body:
            return _error(
                ResponseCode.QUERY_NOT_FOUND, "can not find message, maybe time range not correct"
            )
        header = QueryMessageResponseHeader(
            index_last_update_timestamp=result.index_last_update_timestamp,
            index_last_update_phyoffset=result.index_last_update_phyoffset,
        )
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, ext_fields=header.to_ext_fields(), body=body
        )
