"""ControllerConfig: the controller's settings with RocketMQ's keys and defaults.

RocketMQ's ``ControllerConfig`` (common/.../ControllerConfig.java) is filled from the
``controller.conf`` of ``mqcontroller -c`` or, with ``enableControllerInNamesrv=true``, from the
name server's file. Its camelCase keys map to the snake_case fields below (with a unit suffix
where RocketMQ's name has none). RocketMQ keys that have no meaning here (thread pools, the
DLedger segment size, gRPC metrics) are accepted and logged as ignored; a key nobody knows is
warned about by name, never silently dropped (as ``BrokerConfig.from_properties`` does).

``controllerDLegerPeers`` is ``n0-127.0.0.1:9878;n1-127.0.0.1:9868;...``: each peer's id and its
address, which is both its Raft port and its controller remoting address. Raft node ids are the
peer ids' positions in sorted order, from 1, so every node numbers the group alike whatever the
order in which its file lists the peers.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from rocketq.errors import ConfigError

log = logging.getLogger(__name__)

DLEDGER_CONTROLLER = "DLedger"
JRAFT_CONTROLLER = "jRaft"

# camelCase key in controller.conf -> ControllerConfig field
CONTROLLER_KEYS: dict[str, str] = {
    "controllerDLegerGroup": "controller_dleger_group",
    "controllerDLegerPeers": "controller_dleger_peers",
    "controllerDLegerSelfId": "controller_dleger_self_id",
    "controllerStorePath": "controller_store_path",
    "controllerType": "controller_type",
    "scanNotActiveBrokerInterval": "scan_not_active_broker_interval_ms",
    "scanInactiveMasterInterval": "scan_inactive_master_interval_ms",
    "electMasterMaxRetryCount": "elect_master_max_retry_count",
    "enableElectUncleanMaster": "enable_elect_unclean_master",
    "notifyBrokerRoleChanged": "notify_broker_role_changed",
    "configStorePath": "config_store_path",
    "configBlackList": "config_black_list",
    "metricsExporterType": "metrics_exporter_type",
    "metricsPromExporterHost": "metrics_prom_exporter_host",
    "metricsPromExporterPort": "metrics_prom_exporter_port",
}

#: the keys UPDATE_CONTROLLER_CONFIG changes at run time (the others need a restart)
RUNTIME_KEYS: frozenset[str] = frozenset(
    {
        "scanNotActiveBrokerInterval",
        "scanInactiveMasterInterval",
        "electMasterMaxRetryCount",
        "enableElectUncleanMaster",
        "notifyBrokerRoleChanged",
    }
)

# RocketMQ ControllerConfig keys accepted without effect: Java thread pools and DLedger's
# mmap segment size have no counterpart; reads always go through ReadIndex here
IGNORED_KEYS: frozenset[str] = frozenset(
    {
        "controllerThreadPoolNums",
        "controllerRequestThreadPoolQueueCapacity",
        "mappedFileSize",
        "isProcessReadEvent",
        "rocketmqHome",
        "metricsGrpcExporterTarget",
        "metricsGrpcExporterHeader",
        "metricGrpcExporterTimeOutInMills",
        "metricGrpcExporterIntervalInMills",
        "metricLoggingExporterIntervalInMills",
        "metricsLabel",
        "metricsInDelta",
    }
)

_PEER = re.compile(r"^([^-;\s]+)-([^\s;]+):(\d{1,5})$")
_INT = re.compile(r"^-?\d+$")


def parse_peers(text: str) -> dict[str, str]:
    """``n0-127.0.0.1:9878;n1-...`` -> {"n0": "127.0.0.1:9878", ...}."""
    peers: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        match = _PEER.match(part)
        if match is None:
            raise ConfigError(f"controllerDLegerPeers: {part!r} is not id-host:port")
        peer_id, host, port = match.groups()
        if peer_id in peers:
            raise ConfigError(f"controllerDLegerPeers: peer {peer_id} listed twice")
        peers[peer_id] = f"{host}:{port}"
    if not peers:
        raise ConfigError("controllerDLegerPeers lists no peer")
    return peers


@dataclass(frozen=True, kw_only=True, slots=True)
class ControllerConfig:
    controller_dleger_group: str | None = None
    controller_dleger_peers: str | None = None
    controller_dleger_self_id: str | None = None
    # RocketMQ: empty means ~/<controllerType>Controller
    controller_store_path: str = ""
    controller_type: str = DLEDGER_CONTROLLER
    scan_not_active_broker_interval_ms: int = 5_000
    scan_inactive_master_interval_ms: int = 5_000
    elect_master_max_retry_count: int = 3
    enable_elect_unclean_master: bool = False
    notify_broker_role_changed: bool = True
    config_store_path: str = str(Path.home() / "controller" / "controller.properties")
    config_black_list: str = "configBlackList;configStorePath"
    # PROM: the controller's /metrics (ControllerMetricsManager) on this host and port; the
    # name server's embedded controller joins the name server's own /metrics instead
    metrics_exporter_type: str = "DISABLE"
    metrics_prom_exporter_host: str = ""
    metrics_prom_exporter_port: int = 5557
    # rocketq's Raft timing (no RocketMQ key): ticks of raft_tick_ms; followers campaign after
    # [election, 2 * election) ticks of silence; leaders heartbeat every heartbeat ticks
    raft_tick_ms: int = 100
    raft_election_tick: int = 10
    raft_heartbeat_tick: int = 1
    raft_snapshot_entries: int = 1000

    def __post_init__(self) -> None:
        if self.controller_type == JRAFT_CONTROLLER:
            raise ConfigError("controllerType=jRaft is not supported: use DLedger (rocketq's Raft)")
        if self.controller_type != DLEDGER_CONTROLLER:
            raise ConfigError(f"controllerType={self.controller_type!r}: only DLedger is known")
        for name in (
            "scan_not_active_broker_interval_ms",
            "scan_inactive_master_interval_ms",
            "raft_tick_ms",
            "raft_snapshot_entries",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive")
        if self.elect_master_max_retry_count < 0:
            raise ConfigError("elect_master_max_retry_count must be >= 0")
        if not 0 < self.raft_heartbeat_tick < self.raft_election_tick:
            raise ConfigError("need 0 < raft_heartbeat_tick < raft_election_tick")
        if self.controller_dleger_peers is not None:
            peers = parse_peers(self.controller_dleger_peers)
            if self.controller_dleger_self_id not in peers:
                raise ConfigError(
                    f"controllerDLegerSelfId {self.controller_dleger_self_id!r} is not one of "
                    f"controllerDLegerPeers ({', '.join(peers)})"
                )

    # ---- the group -----------------------------------------------------------------------

    @property
    def peers(self) -> dict[str, str]:
        if self.controller_dleger_peers is None:
            raise ConfigError("controllerDLegerPeers is not set")
        return parse_peers(self.controller_dleger_peers)

    @property
    def raft_ids(self) -> dict[str, int]:
        """Peer id -> Raft node id (1..N, by sorted peer id)."""
        return {peer: number for number, peer in enumerate(sorted(self.peers), start=1)}

    @property
    def self_raft_id(self) -> int:
        assert self.controller_dleger_self_id is not None  # __post_init__ checked it
        return self.raft_ids[self.controller_dleger_self_id]

    @property
    def self_addr(self) -> str:
        assert self.controller_dleger_self_id is not None
        return self.peers[self.controller_dleger_self_id]

    @property
    def store_path(self) -> Path:
        """``controllerStorePath``, or ~/DLedgerController as RocketMQ's getter answers."""
        path = self.controller_store_path or str(Path.home() / f"{self.controller_type}Controller")
        return Path(os.path.expanduser(path))

    # ---- loading -------------------------------------------------------------------------

    @classmethod
    def from_properties(
        cls, props: dict[str, str], *, warn_unknown: bool = True, **overrides: Any
    ) -> ControllerConfig:
        """Build from controller.conf properties. Unknown keys are warned about by name unless
        ``warn_unknown`` is False (the name server's file also holds the name server's keys)."""
        types = {f.name: str(f.type) for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, text in props.items():
            if key in CONTROLLER_KEYS:
                name = CONTROLLER_KEYS[key]
                values[name] = _convert(key, text, types[name])
            elif key in IGNORED_KEYS:
                log.info("controller.conf: %s has no effect in rocketq; ignored", key)
            elif warn_unknown:
                log.warning("controller.conf: unknown key %r ignored", key)
        values.update(overrides)
        return cls(**values)

    def to_properties(self) -> dict[str, str]:
        """Every keyed setting as RocketMQ's ``key=value`` text (GET_CONTROLLER_CONFIG)."""
        out = {}
        for key, name in sorted(CONTROLLER_KEYS.items()):
            value = getattr(self, name)
            if value is not None:
                out[key] = str(value).lower() if isinstance(value, bool) else str(value)
        return out

    def with_properties(self, props: dict[str, str]) -> ControllerConfig:
        """A copy with the ``RUNTIME_KEYS`` among ``props`` applied (UPDATE_CONTROLLER_CONFIG);
        other keys are left for a restart, as RocketMQ's fields they set have no effect."""
        types = {f.name: str(f.type) for f in fields(self)}
        values: dict[str, Any] = {}
        for key, text in props.items():
            if key in RUNTIME_KEYS:
                name = CONTROLLER_KEYS[key]
                values[name] = _convert(key, text, types[name])
            else:
                log.info("controller config: %s is not changed at run time", key)
        return replace(self, **values)


def known_key(key: str) -> bool:
    return key in CONTROLLER_KEYS or key in IGNORED_KEYS


def _convert(key: str, text: str, type_name: str) -> Any:
    text = text.strip()
    if type_name == "bool":
        if text.lower() not in ("true", "false"):
            raise ConfigError(f"{key}: expected true or false, got {text!r}")
        return text.lower() == "true"
    if type_name == "int":
        if not _INT.match(text):
            raise ConfigError(f"{key}: expected an integer, got {text!r}")
        return int(text)
    return text
