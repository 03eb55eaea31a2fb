"""ACL administration of a broker (MQClientAPIImpl's ACL calls, for DefaultMQAdminExt).

Each function sends one ACL admin code over a ``RemotingClient`` (sign it with an admin
account's ``AclClientRPCHook``) and raises the response's ``BrokerResponseError`` unless the
broker answered SUCCESS.
"""

from __future__ import annotations

import json

from rocketq.errors import for_code
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.acl_bodies import (
    GetBrokerClusterAclConfigResponseBody,
    PlainAccessConfig,
)
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    CreateAccessConfigRequestHeader,
    DeleteAccessConfigRequestHeader,
    GetBrokerAclConfigResponseHeader,
    UpdateGlobalWhiteAddrsConfigRequestHeader,
)
from rocketq.response_code import ResponseCode

DEFAULT_TIMEOUT_S = 5.0


async def _call(
    client: RemotingClient, addr: str, request: RemotingCommand, timeout_s: float
) -> RemotingCommand:
    response = await client.invoke(addr, request, timeout_s)
    if response.code != ResponseCode.SUCCESS:
        raise for_code(response.code, response.remark or "")
    return response


async def create_or_update_access_config(
    client: RemotingClient,
    addr: str,
    config: PlainAccessConfig,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> None:
    header = CreateAccessConfigRequestHeader(
        access_key=config.access_key,
        secret_key=config.secret_key,
        white_remote_address=config.white_remote_address,
        admin=config.admin,
        default_topic_perm=config.default_topic_perm,
        default_group_perm=config.default_group_perm,
        topic_perms=",".join(config.topic_perms) or None,
        group_perms=",".join(config.group_perms) or None,
    )
    request = RemotingCommand.create_request(
        RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, header.to_ext_fields()
    )
    await _call(client, addr, request, timeout_s)


async def delete_access_config(
    client: RemotingClient, addr: str, access_key: str, timeout_s: float = DEFAULT_TIMEOUT_S
) -> None:
    header = DeleteAccessConfigRequestHeader(access_key=access_key)
    request = RemotingCommand.create_request(RequestCode.DELETE_ACL_CONFIG, header.to_ext_fields())
    await _call(client, addr, request, timeout_s)


async def update_global_white_addrs(
    client: RemotingClient,
    addr: str,
    addrs: list[str],
    acl_file_full_path: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> None:
    header = UpdateGlobalWhiteAddrsConfigRequestHeader(
        global_white_addrs=",".join(addrs), acl_file_full_path=acl_file_full_path
    )
    request = RemotingCommand.create_request(
        RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, header.to_ext_fields()
    )
    await _call(client, addr, request, timeout_s)


async def get_broker_cluster_acl_info(
    client: RemotingClient, addr: str, timeout_s: float = DEFAULT_TIMEOUT_S
) -> tuple[GetBrokerAclConfigResponseHeader, dict[str, int]]:
    """The broker's identity and its ACL file's dataVersion (``counter``, ``timestamp``)."""
    request = RemotingCommand.create_request(RequestCode.GET_BROKER_CLUSTER_ACL_INFO)
    response = await _call(client, addr, request, timeout_s)
    header = GetBrokerAclConfigResponseHeader.from_ext_fields(response.ext_fields)
    return header, json.loads(header.version)


async def get_broker_cluster_acl_config(
    client: RemotingClient, addr: str, timeout_s: float = DEFAULT_TIMEOUT_S
) -> GetBrokerClusterAclConfigResponseBody:
    request = RemotingCommand.create_request(RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG)
    response = await _call(client, addr, request, timeout_s)
    return GetBrokerClusterAclConfigResponseBody.decode(response.body)
