"""``rocketq server``: a name server and a broker in one process (for development).

The name server listens on 9876 and the broker on 10911 by default; the store lives under
``~/store`` unless ``--store`` says otherwise. ``--cluster 2m-2s-sync`` (or ``-async``) runs
two broker groups, each a master and its slave, instead (``server_layout.py``);
``--cluster controller`` a controller and a group of three broker processes that fail over
(``server_controller.py``). Except with the controller, the gRPC endpoint for RocketMQ 5 clients
listens on 8081 (``--grpc-port``) on the same host (``rocketq.proxy``, local mode).
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rocketq.broker.config import BrokerConfig
from rocketq.cli.server_controller import run_controller_cluster
from rocketq.cli.server_layout import LAYOUTS, broker_configs
from rocketq.cli.startup import freeze_start_up_heap, run_server, setup_logging
from rocketq.errors import ConfigError, describe
from rocketq.namesrv.config import NamesrvConfig

if TYPE_CHECKING:
    from rocketq.broker.controller import BrokerController
    from rocketq.proxy.server import GrpcServer


@click.command()
@click.option(
    "--store",
    type=click.Path(file_okay=False),
    default="~/store",
    show_default=True,
    help="Store root.",
)
@click.option("--namesrv-port", type=int, default=9876, show_default=True)
@click.option("--broker-port", type=int, default=10911, show_default=True)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Listen address of both servers, /metrics and the dashboard (0.0.0.0: every "
    "interface; give the dashboard --login-required then).",
)
@click.option(
    "--broker-ip", default="127.0.0.1", show_default=True, help="Address the broker advertises."
)
@click.option(
    "--metrics-port",
    type=int,
    default=None,
    help="Serve the broker's /metrics here and the name server's on the next port.",
)
@click.option(
    "--dashboard-port",
    type=int,
    default=None,
    help="Serve the web dashboard on 127.0.0.1:PORT too.",
)
@click.option(
    "--login-required",
    is_flag=True,
    help="The dashboard's users log in: <store>/dashboard/users.properties (user=password,role; "
    "role 1 or admin may change things, others read-only), as rocketmq-dashboard's loginRequired.",
)
@click.option(
    "--grpc-port",
    type=int,
    default=8081,
    show_default=True,
    help="Port of the gRPC endpoint for RocketMQ 5 clients, on --host (0: any free port).",
)
@click.option(
    "-c",
    "--config-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="The broker's broker.conf, created if missing; updateBrokerConfig writes its "
    "changes there and the next start reads them (single layout only).",
)
@click.option(
    "--cluster",
    type=click.Choice((*LAYOUTS, "controller")),
    default="single",
    show_default=True,
    help="One broker, two master/slave groups (RocketMQ's 2m-2s samples), or a controller "
    "and three broker processes in controller mode (automatic failover).",
)
def server(
    store: str,
    namesrv_port: int,
    broker_port: int,
    host: str,
    broker_ip: str,
    metrics_port: int | None,
    dashboard_port: int | None,
    login_required: bool,
    grpc_port: int,
    config_file: str | None,
    cluster: str,
) -> None:
    """Run a name server and a broker in one process until SIGTERM/SIGINT.

    \b
    Example:
      rocketq server --store ~/store -c ~/store/broker.conf --dashboard-port 8080
    """
    setup_logging()
    root = str(Path(store).expanduser())
    if cluster == "controller":
        if metrics_port is not None or dashboard_port is not None or config_file is not None:
            raise click.UsageError(
                "--metrics-port, --dashboard-port and -c go without --cluster controller"
            )
        run_server(
            run_controller_cluster(root, namesrv_port, broker_port, host, broker_ip),
            ports={
                namesrv_port: "--namesrv-port",
                namesrv_port + 2: "--namesrv-port (the controller is on it + 2)",
            },
            host=host,
            store_option="--store",
        )
        return
    base = _base_config(config_file, cluster)
    users = Path(root) / "dashboard" / "users.properties"
    if login_required and (dashboard_port is None or not users.exists()):
        raise click.UsageError(
            f"--login-required needs --dashboard-port and {users} (one user a line: "
            "admin=<password>,1 for an admin, user=<password> for a read-only user)"
        )
    ports = {namesrv_port: "--namesrv-port", broker_port: "--broker-port"}
    ports[broker_port + 1] = "--broker-port (the HA port is the broker port + 1)"
    if metrics_port is not None:
        ports[metrics_port] = "--metrics-port"
        ports[metrics_port + 1] = "--metrics-port (the name server's /metrics is on the next port)"
    if dashboard_port is not None:
        ports[dashboard_port] = "--dashboard-port"
    ports[grpc_port] = "--grpc-port"
    run_server(
        _run(
            root,
            namesrv_port,
            broker_port,
            host,
            broker_ip,
            metrics_port,
            dashboard_port,
            cluster,
            base,
            login_required,
            grpc_port,
        ),
        ports=ports,
        host=host,
        store_option="--store",
    )


async def _run(
    root: str,
    namesrv_port: int,
    broker_port: int,
    host: str,
    broker_ip: str,
    metrics_port: int | None = None,
    dashboard_port: int | None = None,
    cluster: str = "single",
    base: BrokerConfig | None = None,
    login_required: bool = False,
    grpc_port: int | None = None,
) -> None:
    from rocketq.broker.controller import BrokerController
    from rocketq.namesrv.server import NamesrvController

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    ns_config, config = _configs(
        root, namesrv_port, broker_port, host, broker_ip, metrics_port, base
    )
    namesrv = NamesrvController(ns_config)
    await namesrv.start()
    config = dataclasses.replace(config, namesrv_addr=f"127.0.0.1:{namesrv.port}")
    brokers: list[BrokerController] = []
    dashboard: asyncio.Task[None] | None = None
    endpoint: GrpcServer | None = None
    try:
        click.echo(f"name server listening on {host}:{namesrv.port}")
        for i, broker_config in enumerate(broker_configs(cluster, config, root)):
            if i:  # one /metrics port: the first broker's
                broker_config = dataclasses.replace(
                    broker_config, metrics_exporter_type=BrokerConfig().metrics_exporter_type
                )
            brokers.append(BrokerController(broker_config))
            await brokers[-1].start()
            click.echo(
                f"broker {broker_config.broker_name} (id {broker_config.broker_id}, "
                f"{broker_config.broker_role.value}) listening on {brokers[-1].broker_addr}, "
                f"HA port {brokers[-1].ha_port}, store {broker_config.store_path_root_dir}"
            )
        broker = brokers[0]
        click.echo(f"clients: set the name server address to 127.0.0.1:{namesrv.port}")
        if broker.metrics_exporter is not None and namesrv.metrics_exporter is not None:
            click.echo(f"metrics: {broker.metrics_exporter.url} and {namesrv.metrics_exporter.url}")
        if grpc_port is not None:
            endpoint = await _start_grpc(grpc_port, namesrv.port, host, broker)
        if dashboard_port is not None:
            listener = socket.create_server((host, dashboard_port))  # a taken port fails here
            dashboard = loop.create_task(
                _serve_dashboard(
                    f"127.0.0.1:{namesrv.port}",
                    listener,
                    stop,
                    Path(root) / "dashboard",
                    login_required,
                )
            )
            click.echo(f"dashboard: http://{_url_host(host)}:{dashboard_port}")
        freeze_start_up_heap()
        await stop.wait()
    finally:
        if dashboard is not None:
            stop.set()
            await dashboard
        if endpoint is not None:
            await endpoint.stop()
        for each in reversed(brokers):
            await each.shutdown()
        await namesrv.shutdown()


async def _start_grpc(
    port: int, namesrv_port: int, host: str, broker: BrokerController
) -> GrpcServer:
    """The gRPC endpoint over this process's name server (its series on the broker's /metrics)."""
    from rocketq.cli.proxy import start_endpoint
    from rocketq.proxy.config import ProxyConfig

    exporter = broker.metrics_exporter
    validator = broker.access_validator
    return await start_endpoint(
        ProxyConfig(grpc_server_port=port, rocketmq_cluster_name=broker.config.broker_cluster_name),
        f"127.0.0.1:{namesrv_port}",
        host,
        None if exporter is None else exporter.registry,
        broker.broker_addr,
        None if validator is None else validator.manager,
    )


def _configs(
    root: str,
    namesrv_port: int,
    broker_port: int,
    host: str,
    broker_ip: str,
    metrics_port: int | None,
    base: BrokerConfig | None = None,
) -> tuple[NamesrvConfig, BrokerConfig]:
    """The name server's and broker's settings; ``metrics_port``: the broker's /metrics there
    and the name server's on the next port (metricsExporterType=PROM); ``base``: what the
    -c file says (the command line's ports, host and store win)."""
    # clients without a TBW102 fallback (ali-ons) get a route for a topic not created yet
    ns_config = NamesrvConfig(
        listen_host=host, listen_port=namesrv_port, auto_create_topic_route_enable=True
    )
    config = dataclasses.replace(
        base or BrokerConfig(),
        listen_host=host,
        listen_port=broker_port,
        broker_ip1=broker_ip,
        store_path_root_dir=root,
    )
    if metrics_port is not None:
        ns_config = dataclasses.replace(
            ns_config,
            metrics_exporter_type="PROM",
            metrics_prom_exporter_host=host,
            metrics_prom_exporter_port=metrics_port + 1,
        )
        config = dataclasses.replace(
            config,
            metrics_exporter_type="PROM",
            metrics_prom_exporter_host=host,
            metrics_prom_exporter_port=metrics_port,
        )
    return ns_config, config


CONFIG_FILE_HEADER = (
    "# broker.conf of rocketq server: RocketMQ's keys (brokerPermission=6, ...); the command\n"
    "# line's ports, host and store win over listenPort, storePathRootDir. updateBrokerConfig\n"
    "# writes its changes here, as RocketMQ's broker does to its -c file.\n"
)


def _base_config(config_file: str | None, cluster: str) -> BrokerConfig | None:
    """The -c file's settings (the file is created if missing), or None without -c."""
    if config_file is None:
        return None
    if cluster != "single":
        raise click.UsageError("-c/--config-file goes with --cluster single only")
    path = Path(config_file).expanduser()
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(CONFIG_FILE_HEADER, encoding="utf-8")
        return BrokerConfig.from_file(path)
    except (OSError, ConfigError) as exc:
        raise click.ClickException(f"{describe(exc)} (-c/--config-file)") from None


def _url_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


async def _serve_dashboard(
    namesrv_addr: str,
    listener: socket.socket,
    stop: asyncio.Event,
    data_path: Path,
    login_required: bool = False,
) -> None:
    """The dashboard on uvicorn in this loop, on ``listener``, until ``stop`` is set; its
    history under ``data_path`` (``<store>/dashboard``)."""
    import uvicorn

    from rocketq.dashboard import create_app

    app = create_app(namesrv_addr, data_path=data_path, login_required=login_required)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    serving = asyncio.get_running_loop().create_task(server.serve(sockets=[listener]))
    await stop.wait()
    server.should_exit = True
    await serving
