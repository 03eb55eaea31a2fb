"""PlainAccessValidator: the broker's one ACL hook, run before every request's processor.

The remoting server calls it with each request (``RemotingServer.register_rpc_hook``), before
the processor is even looked up, so no processor runs, and nothing a refused request carried is
stored, unless the check passed. A refusal answers NO_PERMISSION (16, as RocketMQ 5.x; 4.x
answered SYSTEM_ERROR) with the reason as remark, naming the account and the resource.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from rocketq.broker.acl.access_resource import parse
from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.broker.config import BrokerConfig
from rocketq.errors import AclError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

PLAIN_ACL_FILE_NAME = "plain_acl.yml"
ROCKETMQ_HOME_ENV = "ROCKETMQ_HOME"


def default_acl_file(store_root: str | os.PathLike[str]) -> Path:
    """``<store>/config/plain_acl.yml``; else ``$ROCKETMQ_HOME/conf/plain_acl.yml`` when that
    one exists (RocketMQ's place); else the store's (created by the first ACL update)."""
    in_store = Path(store_root) / "config" / PLAIN_ACL_FILE_NAME
    if in_store.exists():
        return in_store
    home = os.environ.get(ROCKETMQ_HOME_ENV)
    if home:
        in_home = Path(home) / "conf" / PLAIN_ACL_FILE_NAME
        if in_home.exists():
            return in_home
    return in_store


def create_access_validator(config: BrokerConfig) -> PlainAccessValidator:
    """The validator of a broker with ``aclEnable=true``; a bad ACL file stops the start."""
    path = Path(config.acl_file_path) if config.acl_file_path else None
    manager = PlainPermissionManager(
        path or default_acl_file(config.store_path_root_dir),
        watch_interval_s=config.acl_watch_interval_ms / 1000,
    )
    manager.load()
    return PlainAccessValidator(manager)


class PlainAccessValidator:
    def __init__(self, manager: PlainPermissionManager) -> None:
        self.manager = manager
        self.allowed_count = 0
        self.refused_count = 0

    def __call__(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand | None:
        """None lets the request through; a response refuses it."""
        try:
            self.manager.validate(parse(request, channel.remote_addr), request)
        except AclError as exc:
            self.refused_count += 1
            log.warning(
                "ACL refused request code %s from %s: %s", request.code, channel.remote_addr, exc
            )
            return RemotingCommand.create_response(ResponseCode.NO_PERMISSION, str(exc))
        self.allowed_count += 1
        return None
