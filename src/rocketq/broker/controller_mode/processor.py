"""A controller-mode broker's requests: the fence, the role push and its epoch cache.

- **The fence** (RocketMQ 5's ``ReplicasManager.setFenced``: the broker isolated and the store's
  running flags fenced, apache/rocketmq issue #6508): until the controller confirmed a role,
  an RPC hook refuses every read and write of messages with SERVICE_NOT_AVAILABLE and a remark
  that says why. A broker becoming master refuses pops the same way until its pop offsets
  are past the old master's last pops (``pop_offsets``): a few milliseconds, sends go on.
- **NOTIFY_BROKER_ROLE_CHANGED** (1008, oneway from the controller; AdminBrokerProcessor's
  ``notifyBrokerRoleChanged``): handed to the ReplicasManager as a replica-info answer.
- **GET_BROKER_EPOCH_CACHE** (1007, AdminBrokerProcessor's ``getBrokerEpochCache``): the
  epoch entries (each closed by the next one's start) and the max offset, as
  ``EpochEntryCache``; outside controller mode SYSTEM_ERROR "this request only for
  controllerMode ", as RocketMQ answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from rocketq.broker.controller_mode.controller_client import ReplicaView
from rocketq.broker.controller_mode.replicas_manager import ReplicasManager
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.controller_bodies import (
    OPEN_END_OFFSET,
    EpochEntry,
    EpochEntryCache,
    SyncStateSet,
)
from rocketq.remoting.protocol.controller_headers import NotifyBrokerRoleChangedRequestHeader
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.store.ha.autoswitch_service import AutoSwitchHAService

log = logging.getLogger(__name__)

#: every request that reads or writes messages (RocketMQ's RequestCode numbers)
FENCED_CODES: frozenset[int] = frozenset(
    {
        RequestCode.SEND_MESSAGE,
        RequestCode.SEND_MESSAGE_V2,
        RequestCode.SEND_BATCH_MESSAGE,
        RequestCode.SEND_REPLY_MESSAGE,
        RequestCode.SEND_REPLY_MESSAGE_V2,
        RequestCode.CONSUMER_SEND_MSG_BACK,
        RequestCode.END_TRANSACTION,
        RequestCode.END_TRANSACTION_BATCH,  # rocketq's extension: ends a batch half
        RequestCode.RECALL_MESSAGE,
        RequestCode.PULL_MESSAGE,
        361,  # LITE_PULL_MESSAGE (not served here; fenced all the same)
        RequestCode.POP_MESSAGE,
        RequestCode.ACK_MESSAGE,
        200052,  # PEEK_MESSAGE (not served here)
        RequestCode.CHANGE_MESSAGE_INVISIBLETIME,
        RequestCode.NOTIFICATION,
        RequestCode.BATCH_ACK_MESSAGE,
    }
)


#: the requests held while a new master moves its pop offsets (``pop_offsets``)
POP_CODES: frozenset[int] = frozenset({RequestCode.POP_MESSAGE, 200052})


def fencing_hook(
    manager: ReplicasManager,
) -> Callable[[RemotingChannel, RemotingCommand], RemotingCommand | None]:
    def refuse_while_fenced(
        channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand | None:
        if request.code in POP_CODES and (manager.pops_held or not manager.is_master):
            # a pop read on a replica that is not a serving master could put its check point
            # just after the replica became master, before its pop offsets moved: the same
            # messages were then served again (RELIABILITY.md, a partition of the master)
            return RemotingCommand.create_response(
                ResponseCode.SERVICE_NOT_AVAILABLE,
                f"broker {manager.broker.broker_addr} is not a serving master: pops are held "
                "until its pop offsets are moved past the old master's last pops",
            )
        if not manager.fenced or request.code not in FENCED_CODES:
            return None
        return RemotingCommand.create_response(
            ResponseCode.SERVICE_NOT_AVAILABLE,
            f"broker {manager.broker.broker_addr} is fenced: its role is not confirmed by "
            f"the controller yet (controllerAddr {manager.config.controller_addr})",
        )

    return refuse_while_fenced


def register_controller_mode_processors(
    server: RemotingServer, manager: ReplicasManager | None, ha: Callable[[], object]
) -> None:
    """1007 always (refused outside controller mode); in controller mode, 1008 and the fence."""

    async def epoch_cache(channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
        service = ha()
        if manager is None or not isinstance(service, AutoSwitchHAService):
            return RemotingCommand.create_response(
                ResponseCode.SYSTEM_ERROR, "this request only for controllerMode "
            )
        cfg = manager.config
        entries = service.epoch_cache.all_entries()
        body = EpochEntryCache(
            cluster_name=cfg.broker_cluster_name,
            broker_name=cfg.broker_name,
            broker_id=cfg.broker_id,
            epoch_list=[
                EpochEntry(
                    epoch=e.epoch,
                    start_offset=e.start_offset,
                    end_offset=entries[i + 1].start_offset
                    if i + 1 < len(entries)
                    else OPEN_END_OFFSET,
                )
                for i, e in enumerate(entries)
            ],
            max_offset=manager.broker.message_store.get_max_phy_offset(),
        )
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=body.encode())

    server.register_processor(RequestCode.GET_BROKER_EPOCH_CACHE, epoch_cache)
    if manager is None:
        return

    async def role_changed(channel: RemotingChannel, request: RemotingCommand) -> None:
        h = NotifyBrokerRoleChangedRequestHeader.from_ext_fields(request.ext_fields)
        sss = SyncStateSet.decode(request.body) if request.body else SyncStateSet()
        view = ReplicaView(
            h.master_broker_id,
            h.master_address or "",
            h.master_epoch or 0,
            h.sync_state_set_epoch or sss.sync_state_set_epoch,
            frozenset(sss.sync_state_set),
        )
        log.info(
            "role push: master %s (id %s) at epoch %d",
            view.master_address,
            view.master_broker_id,
            view.master_epoch,
        )
        await manager.on_role_push(view)  # a oneway push: no answer

    server.register_processor(RequestCode.NOTIFY_BROKER_ROLE_CHANGED, role_changed)
    server.register_rpc_hook(fencing_hook(manager))
