"""What every ``rocketq admin`` command shares: ``-n`` (or ``NAMESRV_ADDR``), ``--json``,
``--timeout`` and the ACL account that signs its requests (``--ak``/``--sk``, else
``ROCKETQ_ACCESS_KEY``/``ROCKETQ_SECRET_KEY``, else ``accessKey``/``secretKey`` of
``$ROCKETMQ_HOME/conf/tools.yml``, which MQAdminStartup reads with AclUtils.getAclRPCHook);
running one coroutine against an ``AsyncAdminClient``; printing a table, pairs or JSON; and
turning failures into one clear line on stderr with exit code 1."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.table import Cell, format_pairs, format_table
from rocketq.errors import RemotingConnectError, RemotingTimeoutError, RocketQError, describe

if TYPE_CHECKING:
    from rocketq.client.aio import Producer

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_NAMESRV = "127.0.0.1:9876"
#: MixAll.ACL_CONF_TOOLS_FILE, under $ROCKETMQ_HOME
ACL_CONF_TOOLS_FILE = "conf/tools.yml"
#: the address in RemotingClient's connect and write failures
_FAILED_ADDRESS = re.compile(r"(?:connect to|write to|connection to) (\S+?)(?: failed| closed| is)")


@dataclass
class AdminContext:
    namesrv_addr: str
    as_json: bool
    timeout_s: float
    access_key: str = ""
    secret_key: str = ""

    def run(
        self,
        call: Callable[[AsyncAdminClient], Awaitable[T]],
        *,
        access_key: str = "",
        secret_key: str = "",
        target: str | None = None,
    ) -> T:
        """``call`` with a fresh admin client, signing with ``access_key`` (default: the
        command's account) when there is one; errors become a ClickException (exit 1).
        ``target``: what the call talks to, if not the name server (a controller), for the
        message when it cannot connect."""
        if not access_key:
            access_key, secret_key = self.access_key, self.secret_key

        async def main() -> T:
            async with AsyncAdminClient(
                self.namesrv_addr,
                timeout_s=self.timeout_s,
                access_key=access_key,
                secret_key=secret_key,
            ) as admin:
                return await call(admin)

        try:
            return asyncio.run(main())
        except RemotingConnectError as exc:
            if target is not None:
                raise click.ClickException(f"cannot connect to {target} ({describe(exc)})") from exc
            raise click.ClickException(self.connect_failure(exc)) from exc
        except RemotingTimeoutError as exc:
            raise click.ClickException(
                f"timed out after {self.timeout_s:g} s ({describe(exc)}); a busy server may "
                "need a longer --timeout"
            ) from exc
        except (RocketQError, ValueError, OSError) as exc:
            raise click.ClickException(describe(exc)) from exc

    def producer(self, group: str, *, enable_msg_trace: bool = False) -> Producer:
        """A producer of ``group`` on the command's name server, signed with its account."""
        from rocketq.client.aio import Producer

        return Producer(
            group,
            namesrv_addr=self.namesrv_addr,
            access_key=self.access_key,
            secret_key=self.secret_key,
            enable_msg_trace=enable_msg_trace,
        )

    def connect_failure(self, exc: RemotingConnectError) -> str:
        """Blame the address that refused: the name server (-n) or the broker it was sent to."""
        found = _FAILED_ADDRESS.search(str(exc))
        cause = exc.__cause__
        why = os.strerror(cause.errno) if isinstance(cause, OSError) and cause.errno else ""
        why = (why or describe(exc)).lower()
        namesrvs = [a.strip() for a in self.namesrv_addr.split(";") if a.strip()]
        addr = found.group(1) if found else ""
        if not addr or addr in namesrvs or not namesrvs:
            return (
                f"cannot connect to the name server {addr or self.namesrv_addr} ({why}): is it "
                "running? (-n host:port or NAMESRV_ADDR)"
            )
        return (
            f"cannot connect to the broker at {addr} ({why}): is a broker running there? "
            "(check the address given with -b, or clusterList)"
        )

    # ------------------------------------------------------------------ output

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> None:
        if self.as_json:
            keys = [h.lstrip("#") for h in headers]
            self.json([dict(zip(keys, row, strict=True)) for row in rows])
        else:
            click.echo(format_table(headers, rows))

    def pairs(self, pairs: Sequence[tuple[str, Cell]], *, separator: str = ": ") -> None:
        if self.as_json:
            self.json(dict(pairs))
        else:
            click.echo(format_pairs(pairs, separator=separator))

    def json(self, obj: Any) -> None:
        click.echo(json.dumps(obj, indent=2, sort_keys=True, default=_jsonable))

    def done(self, text: str, obj: Any = None) -> None:
        """A one-line outcome, or ``{"ok": true, ...}`` with --json."""
        if self.as_json:
            self.json({"ok": True, "message": text, **(obj or {})})
        else:
            click.echo(text)


def _jsonable(obj: Any) -> Any:
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return to_json()
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    if isinstance(obj, set | frozenset):
        return sorted(obj)
    return str(obj)


def admin_command(func: F) -> F:
    """Add -n/--namesrvAddr, --json and --timeout; the command gets ``ctx: AdminContext``."""

    @click.option(
        "-n",
        "--namesrvAddr",
        "namesrv_addr",
        envvar="NAMESRV_ADDR",
        default=DEFAULT_NAMESRV,
        show_default=True,
        help="Name server address(es), host:port;host:port (env NAMESRV_ADDR).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
    @click.option(
        "--timeout",
        "timeout_s",
        type=float,
        default=5.0,
        show_default=True,
        help="Seconds to wait for each request.",
    )
    @click.option(
        "--ak",
        "sign_access_key",
        envvar="ROCKETQ_ACCESS_KEY",
        default=None,
        help="ACL accessKey to sign with (env ROCKETQ_ACCESS_KEY; else conf/tools.yml).",
    )
    @click.option(
        "--sk",
        "sign_secret_key",
        envvar="ROCKETQ_SECRET_KEY",
        default=None,
        help="ACL secretKey (env ROCKETQ_SECRET_KEY; else $ROCKETMQ_HOME/conf/tools.yml).",
    )
    def wrapper(
        namesrv_addr: str,
        as_json: bool,
        timeout_s: float,
        sign_access_key: str | None,
        sign_secret_key: str | None,
        **kwargs: Any,
    ) -> Any:
        if sign_access_key is None:
            sign_access_key, sign_secret_key = tools_yml_account()
        account = (sign_access_key, sign_secret_key or "")
        ctx = AdminContext(namesrv_addr, as_json, timeout_s, *account)
        return func(ctx, **kwargs)

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper  # type: ignore[return-value]


def tools_yml_account(home: str | None = None) -> tuple[str, str]:
    """accessKey and secretKey of ``$ROCKETMQ_HOME/conf/tools.yml`` ("", "" without one)."""
    home = os.environ.get("ROCKETMQ_HOME", "") if home is None else home
    if not home:
        return "", ""
    try:
        text = (Path(home) / ACL_CONF_TOOLS_FILE).read_text(encoding="utf-8")
    except OSError:
        return "", ""
    found = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("accessKey", "secretKey"):
            found[key.strip()] = value.split(" #")[0].strip().strip("'\"")
    return found.get("accessKey", ""), found.get("secretKey", "")


def parse_timestamp(text: str) -> int:
    """A time as mqadmin takes it: epoch ms, ``now``, or ``yyyy-MM-dd#HH:mm:ss:SSS``."""
    import datetime

    if text == "now":
        return int(datetime.datetime.now().timestamp() * 1000)
    if text.lstrip("-").isdigit():
        return int(text)
    for fmt in ("%Y-%m-%d#%H:%M:%S:%f", "%Y-%m-%d#%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            return int(datetime.datetime.strptime(text, fmt).timestamp() * 1000)
        except ValueError:
            continue
    raise click.BadParameter(
        f"{text!r} is not a time: give epoch milliseconds, 'now' or yyyy-MM-dd#HH:mm:ss:SSS"
    )


def format_ms(ms: int) -> str:
    """Epoch milliseconds as mqadmin prints them (UtilAll.formatDate, local time)."""
    import datetime

    if ms <= 0:
        return "N/A"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S,%f")[:-3]
