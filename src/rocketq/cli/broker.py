"""``rocketq broker``: run a broker until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rocketq.broker.config import BrokerConfig
from rocketq.cli.startup import freeze_start_up_heap, run_server, setup_logging

if TYPE_CHECKING:
    from rocketq.proxy.config import ProxyConfig


def load_broker_config(
    conf: str | None,
    namesrv_addr: str | None,
    port: int | None,
    store: str | None,
    host: str | None = None,
) -> BrokerConfig:
    config = BrokerConfig.from_file(conf) if conf else BrokerConfig()
    overrides: dict[str, object] = {}
    if namesrv_addr:
        overrides["namesrv_addr"] = namesrv_addr
    elif config.namesrv_addr is None and os.environ.get("NAMESRV_ADDR"):
        overrides["namesrv_addr"] = os.environ["NAMESRV_ADDR"]
    if port is not None:
        overrides["listen_port"] = port
    if store:
        overrides["store_path_root_dir"] = str(Path(store).expanduser())
    if host:
        overrides["listen_host"] = host
    return dataclasses.replace(config, **overrides)  # type: ignore[arg-type]


@click.command()
@click.option(
    "-n", "--namesrv-addr", default=None, help="Name server address(es), HOST:PORT;HOST:PORT."
)
@click.option(
    "-c",
    "--config-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="broker.conf",
)
@click.option(
    "-p", "--port", type=int, default=None, help="Listen port (default 10911 or listenPort)."
)
@click.option(
    "--store", type=click.Path(file_okay=False), default=None, help="Store root (storePathRootDir)."
)
@click.option(
    "--host", default=None, help="Listen address of the remoting and HA ports (default all)."
)
@click.option(
    "--enable-proxy",
    is_flag=True,
    default=False,
    help="Serve RocketMQ 5's gRPC endpoint in this process too (local mode, port 8081).",
)
@click.option(
    "-pc",
    "--proxyConfigPath",
    "proxy_config_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="rmq-proxy.json of the --enable-proxy endpoint.",
)
def broker(
    namesrv_addr: str | None,
    config_file: str | None,
    port: int | None,
    store: str | None,
    host: str | None,
    enable_proxy: bool,
    proxy_config_path: str | None,
) -> None:
    """Run a broker until SIGTERM/SIGINT.

    \b
    Example:
      rocketq broker -n 127.0.0.1:9876 -c broker.conf
    """
    setup_logging()
    config = load_broker_config(config_file, namesrv_addr, port, store, host)
    ports = {config.listen_port: "-p/--port (listenPort)"}
    ha_port = int(config.store_properties.get("haListenPort", config.listen_port + 1))
    ports[ha_port] = "haListenPort in the -c file (default: the broker port + 1)"
    if config.metrics_exporter_type == "PROM":
        ports[config.metrics_prom_exporter_port] = "metricsPromExporterPort in the -c file"
    proxy_config = None
    if enable_proxy or proxy_config_path:
        from rocketq.cli.proxy import load_proxy_config

        proxy_config = load_proxy_config(proxy_config_path)
        if not config.namesrv_addr and not proxy_config.namesrv_addr:
            raise click.UsageError("--enable-proxy needs the name server (-n or namesrvAddr)")
        ports[proxy_config.grpc_server_port] = "grpcServerPort in the -pc file"
    run_server(
        run_until_signal(config, proxy_config),
        ports=ports,
        host=config.listen_host,
        store_option="--store (storePathRootDir)",
    )


async def run_until_signal(config: BrokerConfig, proxy_config: ProxyConfig | None = None) -> None:
    from rocketq.broker.controller import BrokerController

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    controller = BrokerController(config)
    await controller.start()
    click.echo(
        f"The broker[{config.broker_name}, {controller.broker_addr}] boot success. "
        f"HA port {controller.ha_port}, store: {config.store_path_root_dir}, "
        f"name server: {config.namesrv_addr or 'none'}"
    )
    endpoint = None
    try:
        if proxy_config is not None:
            from rocketq.cli.proxy import start_endpoint

            exporter = controller.metrics_exporter
            endpoint = await start_endpoint(
                proxy_config,
                proxy_config.namesrv_addr or config.namesrv_addr or "",
                config.listen_host or "0.0.0.0",
                None if exporter is None else exporter.registry,
                controller.broker_addr,
                None
                if controller.access_validator is None
                else controller.access_validator.manager,
            )
        freeze_start_up_heap()
        await stop.wait()
    finally:
        if endpoint is not None:
            await endpoint.stop()
        await controller.shutdown()
