"""``rocketq server``: a name server and a broker in one process (for development).

The name server listens on 9876 and the broker on 10911 by default; the store lives under
``~/store`` unless ``--store`` says otherwise. ``--cluster 2m-2s-sync`` (or ``-async``) runs
two broker groups, each a master and its slave, instead (``server_layout.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
from pathlib import Path

import click

from rocketq.broker.config import BrokerConfig
from rocketq.cli.broker import setup_logging
from rocketq.cli.server_layout import LAYOUTS, broker_configs


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
    "--host", default="0.0.0.0", show_default=True, help="Listen address of both servers."
)
@click.option(
    "--broker-ip", default="127.0.0.1", show_default=True, help="Address the broker advertises."
)
@click.option(
    "--cluster",
    type=click.Choice(LAYOUTS),
    default="single",
    show_default=True,
    help="One broker, or two master/slave groups (RocketMQ's 2m-2s samples).",
)
def server(
    store: str, namesrv_port: int, broker_port: int, host: str, broker_ip: str, cluster: str
) -> None:
    """Run a name server and a broker in one process until SIGTERM/SIGINT."""
    setup_logging()
    root = str(Path(store).expanduser())
    asyncio.run(_run(root, namesrv_port, broker_port, host, broker_ip, cluster))


async def _run(
    root: str, namesrv_port: int, broker_port: int, host: str, broker_ip: str, cluster: str
) -> None:
    from rocketq.broker.controller import BrokerController
    from rocketq.namesrv.config import NamesrvConfig
    from rocketq.namesrv.server import NamesrvController

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    namesrv = NamesrvController(NamesrvConfig(listen_host=host, listen_port=namesrv_port))
    await namesrv.start()
    base = dataclasses.replace(
        BrokerConfig(),
        listen_host=host,
        listen_port=broker_port,
        broker_ip1=broker_ip,
        namesrv_addr=f"127.0.0.1:{namesrv.port}",
    )
    brokers: list[BrokerController] = []
    try:
        click.echo(f"name server listening on {host}:{namesrv.port}")
        for config in broker_configs(cluster, base, root):
            broker = BrokerController(config)
            await broker.start()
            brokers.append(broker)
            click.echo(
                f"broker {config.broker_name} (id {config.broker_id}, "
                f"{config.broker_role.value}) listening on {broker.broker_addr}, "
                f"HA port {broker.ha_port}, store {config.store_path_root_dir}"
            )
        click.echo(f"clients: set the name server address to 127.0.0.1:{namesrv.port}")
        await stop.wait()
    finally:
        for broker in reversed(brokers):
            await broker.shutdown()
        await namesrv.shutdown()
