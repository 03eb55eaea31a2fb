"""SubscriptionGroupManager (config/subscriptionGroup.json); SubscriptionGroupConfig is the
wire body class of ``rocketq.remoting.protocol.group_bodies``.

An admin's updateSubGroup goes through ``update_subscription_group_config_by_request``: the
group's ``attributes`` carry a change (``+key=value``, ``-key``) applied to the stored ones as
RocketMQ 5's SubscriptionGroupManager does, against SubscriptionGroupAttributes, whose set of
keys is empty in RocketMQ 5: every key is refused ("unsupported key: ...").
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from typing import Any

from rocketq.broker.config_manager import ConfigManager
from rocketq.common.attribute import SUBSCRIPTION_GROUP_ATTRIBUTES, alter_current_attributes
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.group_bodies import (
    SubscriptionGroupConfig,
)

__all__ = ["BUILT_IN_GROUPS", "SubscriptionGroupConfig", "SubscriptionGroupManager"]

BUILT_IN_GROUPS = (
    "TOOLS_CONSUMER",
    "FILTERSRV_CONSUMER",
    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",
    "CID_ONSAPI_PULL",
    "CID_ONSAPI_PERMISSION",
    "CID_ONSAPI_OWNER",
    "CID_RMQ_SYS_TRANS",
)


class SubscriptionGroupManager(ConfigManager):
    def __init__(self, store_root: str | os.PathLike[str], *, auto_create: bool = True) -> None:
        super().__init__(os.path.join(store_root, "config", "subscriptionGroup.json"))
        self.auto_create = auto_create
        self.data_version = DataVersion()
        self.subscription_group_table: dict[str, SubscriptionGroupConfig] = {
            g: SubscriptionGroupConfig(group_name=g) for g in BUILT_IN_GROUPS
        }
        self._lock = threading.RLock()

    def find_subscription_group_config(self, group: str) -> SubscriptionGroupConfig | None:
        """The group's config; created (and persisted) on first use when auto-create is on."""
        with self._lock:
            found = self.subscription_group_table.get(group)
            if found is None and self.auto_create:
                found = SubscriptionGroupConfig(group_name=group)
                self.update_subscription_group_config(found)
            return found

    def update_subscription_group_config(self, cfg: SubscriptionGroupConfig) -> None:
        with self._lock:
            self.subscription_group_table[cfg.group_name] = cfg
            self.data_version.next_version()
            self.persist()

    def update_subscription_group_config_by_request(
        self, cfg: SubscriptionGroupConfig
    ) -> SubscriptionGroupConfig:
        """updateSubscriptionGroupConfig of an admin request: ``cfg.attributes`` is a change
        to the stored attributes (AttributeRefusedError when refused)."""
        with self._lock:
            old = self.subscription_group_table.get(cfg.group_name)
            current = (old.attributes or {}) if old is not None else {}
            final = alter_current_attributes(
                old is None, SUBSCRIPTION_GROUP_ATTRIBUTES, current, cfg.attributes or {}
            )
            stored = replace(cfg, attributes=final if final or cfg.attributes is not None else None)
            self.update_subscription_group_config(stored)
            return stored

    def delete_subscription_group_config(self, group: str) -> bool:
        with self._lock:
            if self.subscription_group_table.pop(group, None) is None:
                return False
            self.data_version.next_version()
            self.persist()
            return True

    def encode(self) -> dict[str, Any]:
        return {
            "dataVersion": self.data_version.to_json(),
            "subscriptionGroupTable": {
                g: c.to_json() for g, c in self.subscription_group_table.items()
            },
        }

    def decode(self, obj: dict[str, Any]) -> None:
        with self._lock:
            for name, item in (obj.get("subscriptionGroupTable") or {}).items():
                if isinstance(item, dict) and "groupName" in item:
                    self.subscription_group_table[str(name)] = SubscriptionGroupConfig.from_json(
                        item
                    )
            version = obj.get("dataVersion")
            self.data_version = (
                DataVersion.from_json(version) if isinstance(version, dict) else DataVersion()
            )
