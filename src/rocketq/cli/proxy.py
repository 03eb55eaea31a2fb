"""``rocketq proxy``: RocketMQ 5's gRPC endpoint in a process of its own (cluster mode), and
the composition the broker's ``--enable-proxy`` (local mode) and ``rocketq server`` share.

Cluster mode is stateless: it reads routes from the name servers (``-n``, or ``namesrvAddr``
in ``rmq-proxy.json``) and talks remoting to any number of brokers, so proxies scale out apart
from brokers. ``-pc``/``--proxyConfigPath`` names ``rmq-proxy.json`` (ProxyStartup's option).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import click

from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.cli.startup import run_server, setup_logging
from rocketq.errors import ConfigError
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.metrics import GrpcMetricsCollector
from rocketq.proxy.server import GrpcServer


def load_proxy_config(path: str | None, **overrides: Any) -> ProxyConfig:
    """rmq-proxy.json (or the defaults) with the command line's overrides; a bad key or
    value stops the start with one line."""
    try:
        if path:
            return ProxyConfig.from_file(path, **overrides)
        return ProxyConfig(**overrides)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


async def start_endpoint(
    config: ProxyConfig,
    namesrv_addr: str,
    host: str,
    registry: Any = None,
    node: str = "",
    acl: PlainPermissionManager | None = None,
) -> GrpcServer:
    """Start the gRPC endpoint over ``namesrv_addr``'s brokers; with a Prometheus
    ``registry`` its rocketmq_rpc_latency series join that registry's; with ``acl`` (the
    broker's plain ACL in local mode, plain_acl.yml beside rmq-proxy.json in cluster mode)
    clients are checked against its accounts."""
    server = GrpcServer.over_namesrv(config, namesrv_addr, acl)
    await server.start(host)
    if registry is not None:
        registry.register(
            GrpcMetricsCollector(
                server.service.stats, (config.rocketmq_cluster_name, "proxy", node or host)
            )
        )
    click.echo(f"gRPC endpoint (RocketMQ 5 clients) listening on {host}:{server.port}")
    return server


@click.command()
@click.option("-n", "--namesrv-addr", default=None, help="Name server address(es), HOST:PORT;...")
@click.option(
    "-pc",
    "--proxyConfigPath",
    "proxy_config_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="rmq-proxy.json (grpcServerPort, namesrvAddr, enableTopicMessageTypeCheck, ...).",
)
@click.option("--host", default="0.0.0.0", show_default=True, help="Listen address.")
@click.option("--port", type=int, default=None, help="gRPC port (default grpcServerPort, 8081).")
def proxy(
    namesrv_addr: str | None, proxy_config_path: str | None, host: str, port: int | None
) -> None:
    """Run the gRPC endpoint for RocketMQ 5 clients in front of the brokers until SIGTERM/SIGINT.

    \b
    Example:
      rocketq proxy -n 127.0.0.1:9876 -pc rmq-proxy.json
    """
    setup_logging()
    overrides: dict[str, Any] = {} if port is None else {"grpc_server_port": port}
    config = load_proxy_config(proxy_config_path, **overrides)
    addr = namesrv_addr or config.namesrv_addr
    if not addr:
        raise click.UsageError("give the name server with -n or namesrvAddr in rmq-proxy.json")
    acl = None
    if config.acl_enable:
        folder = Path(proxy_config_path).parent if proxy_config_path else Path.cwd()
        acl = PlainPermissionManager(folder / "plain_acl.yml")
        try:
            acl.load()
        except (ConfigError, OSError) as exc:
            raise click.ClickException(f"aclEnable: {exc}") from None
    run_server(
        _run(config, addr, host, acl),
        ports={config.grpc_server_port: "--port (grpcServerPort)"},
        host=host,
        store_option="",
    )


async def _run(
    config: ProxyConfig, namesrv_addr: str, host: str, acl: PlainPermissionManager | None
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    server = await start_endpoint(config, namesrv_addr, host, acl=acl)
    click.echo(f"The proxy boot success. name server: {namesrv_addr}")
    try:
        await stop.wait()
    finally:
        await server.stop()
