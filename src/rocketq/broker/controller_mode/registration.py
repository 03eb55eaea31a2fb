"""A controller-mode broker's persistent id (RocketMQ 5.1.1's ``ReplicasManager.register``;
RocketMQ's design note on persistent unique broker ids).

Theory of operation. The files left by an earlier run say where to resume, so that a crash at
any step is repeated safely:

1. ``brokerIdentity`` exists: its id is ours (CREATE_METADATA_FILE_DONE).
2. only ``brokerIdentity-temp`` exists: apply its id again with its check code (the controller
   accepts the same code twice) (CREATE_TEMP_METADATA_FILE_DONE).
3. neither: ask the controller for the next id (1012), write the temp file with the check
   code ``addr;millis``, apply it (1013; a refusal means another broker took it: the temp
   file is removed and we start over), then write ``brokerIdentity`` and delete the temp.

Then the broker registers (1003) with the id. A file naming another cluster or broker name is
refused: the operator pointed the broker at someone else's store.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from rocketq.broker.controller_mode.controller_client import (
    ControllerClient,
    ControllerRequestError,
)
from rocketq.common.clock import now_ms
from rocketq.errors import ConfigError
from rocketq.store.ha.broker_identity import (
    TempBrokerMetadata,
    promote_temp,
    read_broker_metadata,
    read_temp_broker_metadata,
    temp_path,
    write_temp_broker_metadata,
)
from rocketq.store.ha.metadata_file import remove_durably

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BrokerIdentityRequest:
    cluster_name: str
    broker_name: str
    broker_addr: str
    identity_path: str


async def obtain_broker_id(client: ControllerClient, who: BrokerIdentityRequest) -> int:
    """This broker's controller id: from ``brokerIdentity``, or applied for and persisted."""
    metadata = read_broker_metadata(who.identity_path)
    if metadata is not None:
        _check_same_group(who, metadata.cluster_name, metadata.broker_name, who.identity_path)
        return metadata.broker_id
    temp = read_temp_broker_metadata(who.identity_path)
    if temp is not None:
        _check_same_group(who, temp.cluster_name, temp.broker_name, temp_path(who.identity_path))
    else:
        next_id = await client.get_next_broker_id(who.cluster_name, who.broker_name)
        temp = TempBrokerMetadata(
            who.cluster_name, who.broker_name, next_id, f"{who.broker_addr};{now_ms()}"
        )
        write_temp_broker_metadata(who.identity_path, temp)
        log.info("applying for broker id %d (temp metadata %s)", next_id, temp.encode().decode())
    try:
        await client.apply_broker_id(
            who.cluster_name, who.broker_name, temp.broker_id, temp.register_check_code
        )
    except ControllerRequestError as exc:
        if exc.code != -1:  # the id is taken: start over with a fresh one
            log.warning("broker id %d refused (%s): applying afresh", temp.broker_id, exc)
            remove_durably(temp_path(who.identity_path))
        raise
    metadata = promote_temp(who.identity_path, temp)
    log.info("broker id %d persisted in %s", metadata.broker_id, who.identity_path)
    return metadata.broker_id


def _check_same_group(
    who: BrokerIdentityRequest, cluster_name: str, broker_name: str, path: str
) -> None:
    if (cluster_name, broker_name) != (who.cluster_name, who.broker_name):
        raise ConfigError(
            f"{path} belongs to {cluster_name}/{broker_name}, not to this broker's "
            f"{who.cluster_name}/{who.broker_name}: fix brokerClusterName/brokerName or the store"
        )
