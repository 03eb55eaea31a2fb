"""``rocketq namesrv``: run a name server until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import logging
import signal

import click

from rocketq.cli.startup import run_server
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.server import NamesrvController


@click.command()
@click.option("-p", "--port", type=int, default=9876, show_default=True, help="Listen port.")
@click.option("--host", default="0.0.0.0", show_default=True, help="Listen address.")
@click.option(
    "--kv-config", type=click.Path(dir_okay=False), default=None, help="kvConfig.json path."
)
@click.option("--order-message-enable", is_flag=True, help="Answer orderTopicConf in routes.")
@click.option(
    "--auto-create-topic-route/--no-auto-create-topic-route",
    default=True,
    show_default=True,
    help="Answer an unknown topic with TBW102's route (brokers that auto-create topics).",
)
def namesrv(
    port: int,
    host: str,
    kv_config: str | None,
    order_message_enable: bool,
    auto_create_topic_route: bool,
) -> None:
    """Run the name server until SIGTERM/SIGINT.

    \b
    Example:
      rocketq namesrv -p 9876
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s"
        )
    config = NamesrvConfig(
        listen_host=host,
        listen_port=port,
        kv_config_path=kv_config,
        order_message_enable=order_message_enable,
        auto_create_topic_route_enable=auto_create_topic_route,
    )
    run_server(_run(config), ports={port: "-p/--port"}, host=host, store_option="")


async def _run(config: NamesrvConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    controller = NamesrvController(config)
    await controller.start()
    click.echo(f"The Name Server boot success. listening on {config.listen_host}:{controller.port}")
    try:
        await stop.wait()
    finally:
        await controller.shutdown()
