"""PlainPermissionManager: the accounts of ``plain_acl.yml``, the check, updates and reload.

Theory of operation: the manager holds one immutable ``PlainAclConfig`` snapshot; ``validate``
reads it on the event loop. A reload (the watcher polls the file's SHA-256 every
``watch_interval_s``, as RocketMQ's FileWatchService compares MD5s every 500 ms) happens once
two polls in a row see the same new bytes, so a file caught mid-write (empty after the
truncate, or cut at an account) is never loaded; it parses the bytes in a worker thread and
swaps the snapshot whole; a file that does not parse, or
is missing, is logged and the previous snapshot stays in force (an operator's typo or an
editor's save must not open or close the broker). Admin updates re-read the file (keeping
hand edits), change it, bump ``dataVersion``, parse the result (so nothing RocketMQ would
refuse gets written), write it atomically and swap the snapshot; one asyncio lock orders
updates and reloads.

``validate`` follows PlainPermissionManager.validate: global white list -> AccessKey present
-> account known -> account white list -> signature -> trace-topic PUB -> admin -> resources.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rocketq.broker.acl.access_resource import PlainAccessResource
from rocketq.broker.acl.permission import (
    PUB,
    check_permission,
    describe_resource,
    need_admin_perm,
    perm_to_string,
)
from rocketq.broker.acl.plain_acl_config import (
    CONFIG_ACCOUNTS,
    CONFIG_GLOBAL_WHITE_ADDRS,
    PlainAccessAccount,
    PlainAclConfig,
    dump_plain_acl,
    next_data_version,
    parse_plain_acl,
    read_file,
    text_of,
    write_atomically,
)
from rocketq.common.topic import RMQ_SYS_TRACE_TOPIC, is_retry_topic
from rocketq.errors import AclError, ConfigError
from rocketq.remoting.acl import verify_signature
from rocketq.remoting.protocol.command import RemotingCommand

log = logging.getLogger(__name__)

DEFAULT_WATCH_INTERVAL_S = 0.5

Edit = Callable[[dict[str, Any]], dict[str, Any]]


class PlainPermissionManager:
    def __init__(self, path: Path, *, watch_interval_s: float = DEFAULT_WATCH_INTERVAL_S) -> None:
        self.path = path
        self.watch_interval_s = watch_interval_s
        self.config = PlainAclConfig()
        self.reload_count = 0
        self.last_load_error: str | None = None
        self._pending_digest: str | None = None
        self._lock = asyncio.Lock()
        self._watcher: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ loading

    def load(self) -> None:
        """Load the file now; a file that does not parse raises ConfigError (broker start)."""
        self.config = parse_plain_acl(read_file(self.path), self.path)
        log.info("ACL: %d accounts loaded from %s", len(self.config.accounts), self.path)

    def _read_if_changed(self) -> PlainAclConfig | None:
        """The new snapshot once two polls in a row saw the same changed bytes, else None."""
        if not self.path.exists():  # mid-save by an editor, or deleted: keep what we have
            raise ConfigError(f"{self.path} is missing")
        data = read_file(self.path)
        digest = hashlib.sha256(data).hexdigest()
        if digest == self.config.digest:
            self._pending_digest = None
            self.last_load_error = None
            return None
        if digest != self._pending_digest:  # changed since the last poll: let it settle
            self._pending_digest = digest
            return None
        return parse_plain_acl(data, self.path)

    async def reload_if_changed(self) -> bool:
        """Swap in the file's content if it changed; False when unchanged or invalid."""
        async with self._lock:
            try:
                fresh = await asyncio.to_thread(self._read_if_changed)
            except (ConfigError, OSError) as exc:
                if str(exc) != self.last_load_error:
                    log.exception("ACL: keeping the previous accounts")
                self.last_load_error = str(exc)
                return False
            if fresh is None:
                return False
            self.last_load_error = None
            self.config = fresh
            self.reload_count += 1
            log.info("ACL: %s changed, %d accounts now", self.path, len(fresh.accounts))
            return True

    def start(self) -> None:
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def shutdown(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.watch_interval_s)
            await self.reload_if_changed()

    # ------------------------------------------------------------------ checking

    def validate(self, resource: PlainAccessResource, request: RemotingCommand) -> None:
        """Raise AclError (naming the account and the resource) unless the request may run."""
        config = self.config
        if any(s.match(resource.remote_ip) for s in config.global_white_strategies):
            return
        key = resource.access_key
        if not key:
            raise AclError(
                f"No accessKey is configured: request code {resource.request_code} "
                f"from {resource.remote_ip} is not signed"
            )
        code = resource.request_code
        account = config.accounts.get(key)
        if account is None:
            raise AclError(f"No acl config for accessKey={key} (request code {code})")
        if account.remote_address_strategy.match(resource.remote_ip):
            return
        if not verify_signature(request, account.secret_key):
            raise AclError(f"Check signature failed for accessKey={key} (request code {code})")
        if resource.resource_perm_map.get(RMQ_SYS_TRACE_TOPIC) == PUB:
            return
        check_perm(resource, account)

    # ------------------------------------------------------------------ updates

    async def _rewrite(self, edit: Edit) -> None:
        async with self._lock:
            self.config = await asyncio.to_thread(self._rewrite_file, edit)

    def _rewrite_file(self, edit: Edit) -> PlainAclConfig:
        current = parse_plain_acl(read_file(self.path), self.path)
        data = dump_plain_acl(next_data_version(edit(dict(current.raw))))
        fresh = parse_plain_acl(data, self.path)
        write_atomically(self.path, data)
        return fresh

    async def update_access_config(self, entry: dict[str, Any]) -> None:
        """Create or change one account; ``entry`` holds the YAML keys to set."""
        key = text_of(entry.get("accessKey"))

        def edit(raw: dict[str, Any]) -> dict[str, Any]:
            accounts = [dict(a) for a in raw.get(CONFIG_ACCOUNTS) or [] if isinstance(a, dict)]
            for account in accounts:
                if text_of(account.get("accessKey")) == key:
                    account.update(entry)
                    break
            else:
                accounts.append(dict(entry))
            return {**raw, CONFIG_ACCOUNTS: accounts}

        await self._rewrite(edit)

    async def delete_access_config(self, access_key: str) -> bool:
        """Remove one account; False when no such account is in the file."""
        if access_key not in self.config.accounts:
            return False

        def edit(raw: dict[str, Any]) -> dict[str, Any]:
            accounts = [
                a
                for a in raw.get(CONFIG_ACCOUNTS) or []
                if not (isinstance(a, dict) and text_of(a.get("accessKey")) == access_key)
            ]
            return {**raw, CONFIG_ACCOUNTS: accounts}

        await self._rewrite(edit)
        return True

    async def update_global_white_addrs(self, addrs: list[str]) -> None:
        await self._rewrite(lambda raw: {**raw, CONFIG_GLOBAL_WHITE_ADDRS: list(addrs)})


def check_perm(resource: PlainAccessResource, account: PlainAccessAccount) -> None:
    """PlainPermissionManager.checkPerm: the admin rule, then every resource's permission."""
    code = resource.request_code
    if need_admin_perm(code) and not account.admin:
        raise AclError(
            f"Need admin permission for request code={code}, "
            f"but accessKey={account.access_key} is not an admin"
        )
    if not account.resource_perm_map and account.admin:
        return
    for name, needed in resource.resource_perm_map.items():
        is_group = is_retry_topic(name)
        default = account.default_group_perm if is_group else account.default_topic_perm
        owned = account.resource_perm_map.get(name, default)
        if not check_permission(needed, owned):
            raise AclError(
                f"No {perm_to_string(needed)} permission for {describe_resource(name)}: "
                f"accessKey={account.access_key} has {perm_to_string(owned)} "
                f"(request code {code})"
            )
