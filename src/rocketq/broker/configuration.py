"""Configuration: the broker's settings as GET_BROKER_CONFIG (26) shows them and
UPDATE_BROKER_CONFIG (25) changes them (4.9.8 ``Configuration`` + AdminBrokerProcessor).

The text form is Java properties, one ``key=value`` a line with RocketMQ's camelCase keys
(``MixAll.properties2String``): every broker.conf key this broker knows, then the store keys
broker.conf gave. An update is applied all or nothing: a key in the black list answers
NO_PERMISSION; an unknown key, a store key (the store is open and does not change under a
running broker) or a key that only takes effect at start (ports, names, paths) is refused
with a remark naming it; a value that does not convert or validate is refused with the
config error. Accepted changes replace ``controller.config`` and bump the data version;
``brokerPermission`` also re-registers with the name servers, whose routes then carry it.
Accepted changes are written to the broker's config file (``brokerConfigPath``: the file the
broker was started from), so they survive a restart as in RocketMQ. Where RocketMQ rewrites
the whole file with every setting, only the changed keys' lines are replaced (or appended),
so the operator's comments and layout stay; the file is written to ``<file>.tmp`` with fsync
and renamed over it, the previous text kept as ``<file>.bak`` (MixAll.string2File). A broker
started without a file keeps its changes in memory only. When the file cannot be written the
update is refused and nothing changes.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from enum import Enum
from typing import Any

from rocketq.broker.broker_context import BrokerContext
from rocketq.broker.config import BROKER_KEYS, STORE_KEYS, BrokerConfig
from rocketq.common.java_properties import parse_properties
from rocketq.common.topic_config import is_readable, is_writeable
from rocketq.errors import ConfigError
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper

CONFIG_BLACK_LIST = frozenset({"configBlackList", "brokerConfigPath"})
START_ONLY_KEYS = frozenset(
    {"listenPort", "brokerName", "brokerClusterName", "brokerId", "storePathRootDir", "brokerIP1"}
)


class ConfigUpdateRefused(ConfigError):
    """An UPDATE_BROKER_CONFIG this broker does not apply; ``black_listed`` for NO_PERMISSION."""

    def __init__(self, reason: str, *, black_listed: bool = False) -> None:
        super().__init__(reason)
        self.black_listed = black_listed


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)


def properties_to_string(props: dict[str, str]) -> str:
    """MixAll.properties2String (sorted, so the text is stable)."""
    return "".join(f"{k}={v}\n" for k, v in sorted(props.items()))


def string_to_properties(text: str) -> dict[str, str]:
    """MixAll.string2Properties: ``key=value`` lines; ``#`` comments and blanks skipped."""
    return parse_properties(text)


class Configuration:
    def __init__(self, controller: BrokerContext) -> None:
        self.broker = controller
        self.data_version = DataVersion()
        self._lock = threading.Lock()

    def all_configs(self) -> dict[str, str]:
        config = self.broker.config
        props = {
            key: _text(getattr(config, name))
            for key, name in BROKER_KEYS.items()
            if getattr(config, name) is not None
        }
        props.update(config.store_properties)
        return props

    def all_configs_format_string(self) -> str:
        return properties_to_string(self.all_configs())

    def data_version_json(self) -> dict[str, int]:
        return self.data_version.to_json()

    def update(self, props: dict[str, str]) -> BrokerConfig:
        """Apply ``props`` or raise ConfigUpdateRefused / ConfigError; returns the new config."""
        if black := sorted(CONFIG_BLACK_LIST & set(props)):
            raise ConfigUpdateRefused(
                f"Can not update config in black list: {', '.join(black)}", black_listed=True
            )
        refused = {
            "store settings cannot change while the broker runs": STORE_KEYS & set(props),
            "these settings take effect only when the broker starts": START_ONLY_KEYS & set(props),
            "unknown broker config keys": set(props) - set(BROKER_KEYS) - STORE_KEYS,
        }
        for reason, keys in refused.items():
            if keys:
                raise ConfigUpdateRefused(f"{reason}: {', '.join(sorted(keys))}")
        with self._lock:
            current = self.broker.config
            known = {k: v for k, v in props.items() if k in BROKER_KEYS}
            parsed = BrokerConfig.from_properties(known)
            changes = {BROKER_KEYS[k]: getattr(parsed, BROKER_KEYS[k]) for k in known}
            updated = dataclasses.replace(current, **changes)
            if current.broker_config_path:
                try:
                    persist_properties(current.broker_config_path, known)
                except OSError as exc:
                    raise ConfigError(
                        f"cannot write {current.broker_config_path}: {exc}; nothing changed"
                    ) from exc
            self.broker.config = updated
            self.data_version.next_version()
        return updated


_KEY_OF_LINE = re.compile(r"^\s*((?:[^\\=:\s]|\\.)+)")


def persist_properties(path: str, changes: dict[str, str]) -> None:
    """Write ``changes`` into the properties file at ``path``: a key's last ``key=value`` line
    is replaced, a key not in the file is appended; other lines are kept as they are."""
    try:
        with open(path, encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    lines = old.splitlines()
    span_of: dict[str, tuple[int, int]] = {}  # key -> its last logical line (first, end)
    number = 0
    while number < len(lines):
        first = number
        while _continues(lines[number]) and number + 1 < len(lines):
            number += 1
        number += 1
        stripped = lines[first].lstrip()
        match = _KEY_OF_LINE.match(lines[first])
        if stripped and stripped[0] not in "#!" and match:
            span_of[match.group(1)] = (first, number)
    replaced = {span_of[k]: f"{k}={_escape_value(v)}" for k, v in changes.items() if k in span_of}
    out: list[str] = []
    number = 0
    while number < len(lines):
        span = next((sp for sp in replaced if sp[0] == number), None)
        if span is None:
            out.append(lines[number])
            number += 1
        else:  # the key's line and its continuation lines become one line
            out.append(replaced[span])
            number = span[1]
    out += [f"{k}={_escape_value(v)}" for k, v in changes.items() if k not in span_of]
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
        f.flush()
        os.fsync(f.fileno())
    if old:
        with open(f"{path}.bak", "w", encoding="utf-8") as f:
            f.write(old)
    os.replace(tmp, path)
    dir_fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _continues(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _escape_value(value: str) -> str:
    """java.util.Properties.store's escaping of a value: backslashes, line breaks, a leading
    space."""
    text = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return "\\" + text if text.startswith(" ") else text


def apply_broker_permission(
    wrapper: TopicConfigSerializeWrapper, broker_permission: int
) -> TopicConfigSerializeWrapper:
    """registerBrokerAll: a broker that is not both readable and writable registers every
    topic with its own permission."""
    if is_readable(broker_permission) and is_writeable(broker_permission):
        return wrapper
    table = {
        name: dataclasses.replace(tc, perm=broker_permission)
        for name, tc in wrapper.topic_config_table.items()
    }
    return TopicConfigSerializeWrapper(topic_config_table=table, data_version=wrapper.data_version)
