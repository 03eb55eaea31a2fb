"""``rocketq controller -c controller.conf``: run one controller until SIGTERM or SIGINT.

The file is RocketMQ's (``mqcontroller -c``): ``controllerDLegerGroup``,
``controllerDLegerPeers``, ``controllerDLegerSelfId``, ``controllerStorePath``, ... The
controller listens on its own peer's address in ``controllerDLegerPeers``. The name server
embeds the same server when its file says ``enableControllerInNamesrv=true`` (cli/namesrv.py).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path

import click

from rocketq.common.java_properties import parse_properties
from rocketq.controller.config import ControllerConfig
from rocketq.controller.manager import ControllerManager
from rocketq.controller.processor import ControllerRequestProcessor
from rocketq.controller.replicas_info import ControllerStateMachine
from rocketq.controller.server import ControllerServer
from rocketq.errors import ConfigError, StoreError
from rocketq.remoting import event_loop


def read_properties(path: str) -> dict[str, str]:
    try:
        return parse_properties(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def new_controller_server(
    config: ControllerConfig, *, listen_host: str | None = None, export_metrics: bool = True
) -> ControllerServer:
    """The controller this process runs: the one place that picks its state machine (the
    controller's ``ControllerStateMachine``), its ``ControllerManager`` (liveness scans,
    elections, role pushes, metrics) and its request processors (904, 1001-1013).

    ``export_metrics``: serve the controller's own ``/metrics`` when the config says PROM; the
    name server's embedded controller passes False and joins the name server's instead."""
    state_machine = ControllerStateMachine()
    server = ControllerServer(config, state_machine, listen_host=listen_host)
    manager = ControllerManager(server, state_machine, export_metrics=export_metrics)
    ControllerRequestProcessor(manager).register_to(server)
    return server


@click.command()
@click.option(
    "-c",
    "--config-file",
    type=click.Path(exists=True, dir_okay=False),
    required=True,
    help="controller.conf (RocketMQ's keys).",
)
@click.option("--host", default=None, help="Listen address (default: the self peer's host).")
def controller(config_file: str, host: str | None) -> None:
    """Run a controller of a RocketMQ 5 controller group until SIGTERM/SIGINT.

    \b
    Example:
      rocketq controller -c controller.conf
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s"
        )
    try:
        config = ControllerConfig.from_properties(read_properties(config_file))
        server = new_controller_server(config, listen_host=host)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    event_loop.run(_run(server))


async def _run(server: ControllerServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await server.start()
    except (ConfigError, StoreError) as exc:  # a store of another node, or corrupt
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {server.addr}: {exc}") from None
    click.echo(
        f"The Controller boot success. {server.self_id} of group {server.group} "
        f"listening on {server.remoting_server.addr}"
    )
    try:
        await stop.wait()
    finally:
        await server.shutdown()
