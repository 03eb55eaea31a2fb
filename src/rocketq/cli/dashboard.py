"""``rocketq dashboard``: the web dashboard (topics, groups, messages, cluster) on a port."""

from __future__ import annotations

import socket

import click

from rocketq.cli.admin_context import DEFAULT_NAMESRV
from rocketq.cli.startup import port_line


@click.command()
@click.option(
    "-n",
    "--namesrvAddr",
    "namesrv_addr",
    envvar="NAMESRV_ADDR",
    default=DEFAULT_NAMESRV,
    show_default=True,
    help="Name server address (env NAMESRV_ADDR).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Listen address.")
@click.option("--port", type=int, default=8080, show_default=True, help="Listen port.")
def dashboard(namesrv_addr: str, host: str, port: int) -> None:
    """Serve the web dashboard until Ctrl-C.

    \b
    Example:
      rocketq dashboard -n 127.0.0.1:9876 --port 8080   # then open http://127.0.0.1:8080
    """
    import uvicorn

    from rocketq.dashboard import create_app

    try:
        listener = socket.create_server((host, port))  # a taken port fails here, in one line
    except OSError as exc:
        raise click.ClickException(port_line(exc, {port: "--port"}, host)) from None
    server = uvicorn.Server(uvicorn.Config(create_app(namesrv_addr), log_level="info"))
    server.run(sockets=[listener])
