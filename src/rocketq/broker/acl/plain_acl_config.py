"""``plain_acl.yml``: its accounts as loaded, parsing, and the atomic rewrite.

The file (RocketMQ 4.x ``distribution/conf/plain_acl.yml``)::

    globalWhiteRemoteAddresses: [10.10.103.*, 192.168.0.*]
    accounts:
      - accessKey: RocketMQ          # longer than 6 characters
        secretKey: 12345678          # longer than 6 characters
        whiteRemoteAddress:          # blank: none; a match skips signature and permissions
        admin: false
        defaultTopicPerm: DENY       # DENY | PUB | SUB | PUB|SUB; missing = DENY
        defaultGroupPerm: SUB
        topicPerms: [topicA=DENY, topicB=PUB|SUB]
        groupPerms: [groupA=DENY, groupB=PUB|SUB]
    dataVersion: [{counter: 1, timestamp: 1700000000000}]

A file that does not parse, or holds an account or address pattern RocketMQ would refuse,
raises ConfigError naming the file and the account; the caller keeps its previous snapshot.
Rewrites go to ``<file>.tmp`` (fsynced), the old file is kept as ``<file>.bak``, then
``os.replace`` and a directory fsync: a reader sees the old file or the new one, never half.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rocketq.broker.acl.permission import parse_perm_from_string, parse_resource_perms
from rocketq.broker.acl.remote_address import RemoteAddressStrategy, get_remote_address_strategy
from rocketq.errors import ConfigError, RemotingCommandError
from rocketq.remoting.protocol.data_version import DataVersion

ACCESS_KEY_MIN_LENGTH = 6  # AclConstants: keys must be longer than this
SECRET_KEY_MIN_LENGTH = 6
CONFIG_GLOBAL_WHITE_ADDRS = "globalWhiteRemoteAddresses"
CONFIG_ACCOUNTS = "accounts"
CONFIG_DATA_VERSION = "dataVersion"


@dataclass(frozen=True, slots=True)
class PlainAccessAccount:
    """One account as the checks use it (PlainAccessResource of the owner, in Java)."""

    access_key: str
    secret_key: str = field(repr=False)
    white_remote_address: str | None
    admin: bool
    default_topic_perm: int
    default_group_perm: int
    resource_perm_map: dict[str, int]
    remote_address_strategy: RemoteAddressStrategy


@dataclass(frozen=True, slots=True)
class PlainAclConfig:
    """One snapshot of the file: replaced whole on reload, never edited in place."""

    accounts: dict[str, PlainAccessAccount] = field(default_factory=dict)
    global_white_addrs: tuple[str, ...] = ()
    global_white_strategies: tuple[RemoteAddressStrategy, ...] = ()
    data_version: DataVersion = field(default_factory=DataVersion)
    raw: dict[str, Any] = field(default_factory=dict)
    digest: str = ""


def text_of(value: object) -> str | None:
    """A YAML scalar as Java reads it into a String field (``12345678`` -> ``"12345678"``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ConfigError(f"expected text, got {type(value).__name__} {value!r}")


def check_keys(access_key: str | None, secret_key: str | None) -> tuple[str, str]:
    """PlainPermissionManager.checkPlainAccessConfig; the two keys when they pass."""
    if (
        not access_key
        or not secret_key
        or len(access_key) <= ACCESS_KEY_MIN_LENGTH
        or len(secret_key) <= SECRET_KEY_MIN_LENGTH
    ):
        raise ConfigError(
            f"the accessKey={access_key} and its secretKey cannot be null "
            "and their length should be longer than 6"
        )
    return access_key, secret_key


def build_account(entry: object) -> PlainAccessAccount:
    """PlainPermissionManager.buildPlainAccessResource, for one ``accounts`` item."""
    if not isinstance(entry, dict):
        raise ConfigError(f"an account must be a mapping, got {entry!r}")
    access_key, secret_key = check_keys(
        text_of(entry.get("accessKey")), text_of(entry.get("secretKey"))
    )
    try:
        white = text_of(entry.get("whiteRemoteAddress"))
        admin = text_of(entry.get("admin")) == "true"
        perms = parse_resource_perms(_list(entry, "groupPerms"), is_topic=False)
        perms.update(parse_resource_perms(_list(entry, "topicPerms"), is_topic=True))
        return PlainAccessAccount(
            access_key=access_key,
            secret_key=secret_key,
            white_remote_address=white,
            admin=admin,
            default_topic_perm=parse_perm_from_string(text_of(entry.get("defaultTopicPerm"))),
            default_group_perm=parse_perm_from_string(text_of(entry.get("defaultGroupPerm"))),
            resource_perm_map=perms,
            remote_address_strategy=get_remote_address_strategy(white),
        )
    except ConfigError as exc:
        raise ConfigError(f"account accessKey={access_key}: {exc}") from None


def _list(entry: dict[str, Any], key: str) -> list[object]:
    value = entry.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{key} must be a list, got {value!r}")
    return value


def _accounts_by_key(entries: list[object]) -> dict[str, PlainAccessAccount]:
    accounts: dict[str, PlainAccessAccount] = {}
    for entry in entries:
        account = build_account(entry)
        if account.access_key in accounts:
            raise ConfigError(f"accessKey={account.access_key} is defined twice")
        accounts[account.access_key] = account
    return accounts


def parse_plain_acl(data: bytes, path: str | os.PathLike[str]) -> PlainAclConfig:
    """The snapshot of a file's bytes (empty bytes: no accounts, nothing white-listed)."""
    try:
        raw = yaml.safe_load(data.decode("utf-8")) if data.strip() else {}
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path} must hold a mapping at the top, got {type(raw).__name__}")
    try:
        white = [text_of(a) or "" for a in _list(raw, CONFIG_GLOBAL_WHITE_ADDRS)]
        accounts = _accounts_by_key(_list(raw, CONFIG_ACCOUNTS))
        strategies = tuple(get_remote_address_strategy(a) for a in white)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return PlainAclConfig(
        accounts=accounts,
        global_white_addrs=tuple(white),
        global_white_strategies=strategies,
        data_version=_data_version(raw),
        raw=raw,
        digest=hashlib.sha256(data).hexdigest(),
    )


def _data_version(raw: dict[str, Any]) -> DataVersion:
    """The file's first dataVersion entry; a missing or malformed one reads as version 0."""
    versions = raw.get(CONFIG_DATA_VERSION)
    first = versions[0] if isinstance(versions, list) and versions else None
    if not isinstance(first, dict):
        return DataVersion()
    try:
        return DataVersion.from_json(first)
    except RemotingCommandError:
        return DataVersion()


def next_data_version(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with its dataVersion bumped (updateAclConfigFileVersion)."""
    version = _data_version(raw)
    version.next_version()
    return {**raw, CONFIG_DATA_VERSION: [version.to_json()]}


def dump_plain_acl(raw: dict[str, Any]) -> bytes:
    return yaml.safe_dump(raw, default_flow_style=False, sort_keys=False).encode("utf-8")


def read_file(path: Path) -> bytes:
    """The file's bytes; a missing file reads as empty."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def write_atomically(path: Path, data: bytes) -> None:
    """tmp + fsync, old file to ``.bak``, replace, directory fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    if path.exists():
        shutil.copyfile(path, path.with_name(path.name + ".bak"))
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
