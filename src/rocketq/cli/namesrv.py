"""``rocketq namesrv``: run a name server until SIGTERM or SIGINT.

``-c namesrv.conf`` reads RocketMQ's keys (``mqnamesrv -c``). With
``enableControllerInNamesrv=true`` the same file configures a controller that this process
also runs, on its ``controllerDLegerPeers`` self address (RocketMQ's NamesrvStartup does the
same). The composition lives here, in cli/: the name server and the controller import neither.
"""

from __future__ import annotations

import asyncio
import logging
import signal

import click

from rocketq.cli.controller import new_controller_server, read_properties
from rocketq.cli.startup import freeze_start_up_heap, run_server
from rocketq.controller.config import ControllerConfig, known_key
from rocketq.controller.server import ControllerServer
from rocketq.errors import ConfigError, StoreError
from rocketq.namesrv.config import NAMESRV_KEYS, NamesrvConfig
from rocketq.namesrv.server import NamesrvController

log = logging.getLogger(__name__)


@click.command()
@click.option(
    "-c",
    "--config-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="namesrv.conf (RocketMQ's keys; enableControllerInNamesrv=true embeds a controller).",
)
@click.option("-p", "--port", type=int, default=None, help="Listen port (default 9876).")
@click.option("--host", default=None, help="Listen address (default 0.0.0.0).")
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
    config_file: str | None,
    port: int | None,
    host: str | None,
    kv_config: str | None,
    order_message_enable: bool,
    auto_create_topic_route: bool,
) -> None:
    """Run the name server until SIGTERM/SIGINT.

    \b
    Example:
      rocketq namesrv -p 9876
      rocketq namesrv -c namesrv.conf
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s"
        )
    options = {
        "listen_port": port,
        "listen_host": host,
        "kv_config_path": kv_config,
        "order_message_enable": order_message_enable or None,
    }
    overrides = {name: value for name, value in options.items() if value is not None}
    overrides["auto_create_topic_route_enable"] = auto_create_topic_route
    try:
        config, controller_config = load_namesrv_config(config_file, **overrides)
        embedded = (
            new_controller_server(controller_config, export_metrics=False)
            if controller_config
            else None
        )
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    run_server(
        _run(config, embedded),
        ports={config.listen_port: "-p/--port (listenPort)"},
        host=config.listen_host,
        store_option="",
    )


def load_namesrv_config(
    path: str | None, **overrides: object
) -> tuple[NamesrvConfig, ControllerConfig | None]:
    """The name server's config and, with enableControllerInNamesrv=true, its controller's."""
    props = read_properties(path) if path else {}
    config = NamesrvConfig.from_properties(props, **overrides)
    for key in props:
        if key not in NAMESRV_KEYS and not known_key(key):
            log.warning("namesrv.conf: unknown key %r ignored", key)
    if not config.enable_controller_in_namesrv:
        return config, None
    return config, ControllerConfig.from_properties(props, warn_unknown=False)


async def _run(config: NamesrvConfig, embedded: ControllerServer | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    controller = NamesrvController(config)
    await controller.start()
    try:
        if embedded is not None:
            await _start_embedded(embedded)
            exporter = controller.metrics_exporter
            if exporter is not None and embedded.metrics_collector is not None:
                exporter.registry.register(embedded.metrics_collector)  # one /metrics for both
        exporter = controller.metrics_exporter
        metrics = "" if exporter is None else f", metrics: {exporter.url}"  # port 0: the bound one
        click.echo(
            "The Name Server boot success. "
            f"listening on {config.listen_host}:{controller.port}{metrics}"
        )
        freeze_start_up_heap()
        await stop.wait()
    finally:
        if embedded is not None:
            await embedded.shutdown()
        await controller.shutdown()


async def _start_embedded(embedded: ControllerServer) -> None:
    try:
        await embedded.start()
    except (ConfigError, StoreError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"controller cannot listen on {embedded.addr}: {exc}") from None
    click.echo(
        f"The Controller boot success. {embedded.self_id} of group {embedded.group} "
        f"listening on {embedded.remoting_server.addr}"
    )
