"""AdminClient: the blocking face of ``AsyncAdminClient`` for scripts, threads and Spark.

A ``BlockingFacade``: each call is the twin of the coroutine of the same name, run on the
process's private loop thread (``LoopThread``); see ``AsyncAdminClient`` for what each does.
The message calls come from ``BlockingMQAdmin``.
"""

from __future__ import annotations

from rocketq.admin.client import AsyncAdminClient
from rocketq.admin.core import DEFAULT_TIMEOUT_S
from rocketq.client.blocking_facade import BlockingFacade, blocking_twin
from rocketq.client.blocking_mq_admin import BlockingMQAdmin

_Admin = AsyncAdminClient  # short, for the twins below


class AdminClient(BlockingMQAdmin, BlockingFacade[AsyncAdminClient]):
    not_mirrored = {
        "call": "the raw request of every admin call (AdminCore), no admin call itself",
        "close": "shutdown() closes the connections",
    }

    def __init__(
        self,
        namesrv_addr: str = "",
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        access_key: str = "",
        secret_key: str = "",
    ) -> None:
        self._namesrv_addr = namesrv_addr
        self._timeout_s = timeout_s
        self._credentials = (access_key, secret_key)
        super().__init__(self._new_impl())

    def _new_impl(self) -> AsyncAdminClient:
        access_key, secret_key = self._credentials
        return AsyncAdminClient(
            self._namesrv_addr,
            timeout_s=self._timeout_s,
            access_key=access_key,
            secret_key=secret_key,
        )

    def start(self) -> None:
        """Take the loop thread; the connections open with the first call."""
        self._start(None)

    def shutdown(self) -> None:
        """Close the connections; a later ``start`` connects afresh."""
        if not self.started:
            return
        closing, self.impl = self.impl, self._new_impl()
        self._shutdown(closing.close)

    # ------------------------------------------------------------------ name server

    fetch_all_topic_list = blocking_twin(_Admin.fetch_all_topic_list)
    fetch_topics_by_cluster = blocking_twin(_Admin.fetch_topics_by_cluster)
    examine_topic_route_info = blocking_twin(_Admin.examine_topic_route_info)
    examine_broker_cluster_info = blocking_twin(_Admin.examine_broker_cluster_info)
    put_kv_config = blocking_twin(_Admin.put_kv_config)
    get_kv_config = blocking_twin(_Admin.get_kv_config)
    delete_kv_config = blocking_twin(_Admin.delete_kv_config)
    get_kv_list_by_namespace = blocking_twin(_Admin.get_kv_list_by_namespace)
    wipe_write_perm_of_broker = blocking_twin(_Admin.wipe_write_perm_of_broker)
    add_write_perm_of_broker = blocking_twin(_Admin.add_write_perm_of_broker)
    delete_topic_in_namesrv = blocking_twin(_Admin.delete_topic_in_namesrv)

    # ------------------------------------------------------------------ brokers

    master_addrs_of_topic = blocking_twin(_Admin.master_addrs_of_topic)
    broker_addr_by_name = blocking_twin(_Admin.broker_addr_by_name)
    master_addrs_of_cluster = blocking_twin(_Admin.master_addrs_of_cluster)
    create_and_update_topic_config = blocking_twin(_Admin.create_and_update_topic_config)
    create_and_update_topic_config_in_cluster = blocking_twin(
        _Admin.create_and_update_topic_config_in_cluster
    )
    delete_topic = blocking_twin(_Admin.delete_topic)
    delete_topic_in_broker = blocking_twin(_Admin.delete_topic_in_broker)
    get_all_topic_config = blocking_twin(_Admin.get_all_topic_config)
    examine_topic_config = blocking_twin(_Admin.examine_topic_config)
    examine_topic_message_types = blocking_twin(_Admin.examine_topic_message_types)
    create_and_update_subscription_group_config = blocking_twin(
        _Admin.create_and_update_subscription_group_config
    )
    delete_subscription_group = blocking_twin(_Admin.delete_subscription_group)
    get_all_subscription_group = blocking_twin(_Admin.get_all_subscription_group)
    fetch_broker_runtime_stats = blocking_twin(_Admin.fetch_broker_runtime_stats)
    get_broker_config = blocking_twin(_Admin.get_broker_config)
    get_broker_config_version = blocking_twin(_Admin.get_broker_config_version)
    update_broker_config = blocking_twin(_Admin.update_broker_config)
    get_all_consumer_offset = blocking_twin(_Admin.get_all_consumer_offset)
    get_all_delay_offset = blocking_twin(_Admin.get_all_delay_offset)
    query_consume_queue = blocking_twin(_Admin.query_consume_queue)

    # ------------------------------------------------------------------ consumers

    examine_consume_stats = blocking_twin(_Admin.examine_consume_stats)
    examine_topic_stats = blocking_twin(_Admin.examine_topic_stats)
    examine_consumer_connection_info = blocking_twin(_Admin.examine_consumer_connection_info)
    examine_producer_connection_info = blocking_twin(_Admin.examine_producer_connection_info)
    get_all_producer_info = blocking_twin(_Admin.get_all_producer_info)
    query_topic_consume_by_who = blocking_twin(_Admin.query_topic_consume_by_who)
    get_consumer_running_info = blocking_twin(_Admin.get_consumer_running_info)
    consume_message_directly = blocking_twin(_Admin.consume_message_directly)
    reset_offset_by_timestamp = blocking_twin(_Admin.reset_offset_by_timestamp)

    # ------------------------------------------------------------------ ACL

    create_and_update_plain_access_config = blocking_twin(
        _Admin.create_and_update_plain_access_config
    )
    delete_plain_access_config = blocking_twin(_Admin.delete_plain_access_config)
    update_global_white_addr_config = blocking_twin(_Admin.update_global_white_addr_config)
    examine_broker_cluster_acl_version_info = blocking_twin(
        _Admin.examine_broker_cluster_acl_version_info
    )
    get_broker_cluster_acl_config = blocking_twin(_Admin.get_broker_cluster_acl_config)

    # ------------------------------------------------------------------ controllers

    get_controller_meta_data = blocking_twin(_Admin.get_controller_meta_data)
    controller_leader_addr = blocking_twin(_Admin.controller_leader_addr)
    get_in_sync_state_data = blocking_twin(_Admin.get_in_sync_state_data)
    get_broker_epoch_cache = blocking_twin(_Admin.get_broker_epoch_cache)
    elect_master = blocking_twin(_Admin.elect_master)
    get_controller_config = blocking_twin(_Admin.get_controller_config)
    update_controller_config = blocking_twin(_Admin.update_controller_config)
    clean_controller_broker_data = blocking_twin(_Admin.clean_controller_broker_data)
    fetch_broker_names_of_cluster = blocking_twin(_Admin.fetch_broker_names_of_cluster)
    fetch_master_and_slave_addrs = blocking_twin(_Admin.fetch_master_and_slave_addrs)

    # ------------------------------------------------------------------ operations

    view_broker_stats_data = blocking_twin(_Admin.view_broker_stats_data)
    messages_of_queue = blocking_twin(_Admin.messages_of_queue)
    query_msg_by_offset = blocking_twin(_Admin.query_msg_by_offset)
    messages_of_topic = blocking_twin(_Admin.messages_of_topic)
    query_msg_trace_by_id = blocking_twin(_Admin.query_msg_trace_by_id)

    # ------------------------------------------------------------------ maintenance

    get_namesrv_config = blocking_twin(_Admin.get_namesrv_config)
    update_namesrv_config = blocking_twin(_Admin.update_namesrv_config)
    update_topic_perm = blocking_twin(_Admin.update_topic_perm)
    update_order_conf = blocking_twin(_Admin.update_order_conf)
    create_and_update_topic_config_list = blocking_twin(_Admin.create_and_update_topic_config_list)
    create_and_update_subscription_group_config_list = blocking_twin(
        _Admin.create_and_update_subscription_group_config_list
    )
    clone_group_offset = blocking_twin(_Admin.clone_group_offset)
    get_consumer_config = blocking_twin(_Admin.get_consumer_config)
    fetch_consume_stats_in_broker = blocking_twin(_Admin.fetch_consume_stats_in_broker)
    allocate_mq = blocking_twin(_Admin.allocate_mq)
    export_metadata = blocking_twin(_Admin.export_metadata)

    # ------------------------------------------------------------------ Spark's topic source

    fetch_subscribe_message_queues = blocking_twin(_Admin.fetch_subscribe_message_queues)
    update_consume_offset = blocking_twin(_Admin.update_consume_offset)
    register_consumer_group = blocking_twin(_Admin.register_consumer_group)
