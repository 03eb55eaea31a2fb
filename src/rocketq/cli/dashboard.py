"""``rocketq dashboard``: the web dashboard (topics, groups, messages, cluster) on a port."""

from __future__ import annotations

import socket
from pathlib import Path

import click

from rocketq.cli.admin_context import DEFAULT_NAMESRV
from rocketq.cli.startup import port_line

#: rocketmq-dashboard keeps its data under /tmp/rocketmq-console/data; ours is per user
DEFAULT_DATA_PATH = "~/.rocketq/dashboard"


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
@click.option(
    "--data-path",
    type=click.Path(file_okay=False),
    default=DEFAULT_DATA_PATH,
    show_default=True,
    help="Where the TPS/lag history (about 16 MiB at most) and users.properties live "
    "(rocketmq-dashboard's rocketmq.config.dataPath).",
)
@click.option(
    "--login-required",
    is_flag=True,
    help="Users of <data-path>/users.properties (user=password,role; role 1 or admin: may "
    "change things, else read-only) log in (rocketmq-dashboard's loginRequired).",
)
@click.option(
    "--access-key",
    envvar="ROCKETQ_ACCESS_KEY",
    default="",
    help="ACL accessKey the dashboard signs its requests with (env ROCKETQ_ACCESS_KEY).",
)
@click.option(
    "--secret-key",
    envvar="ROCKETQ_SECRET_KEY",
    default="",
    help="ACL secretKey (env ROCKETQ_SECRET_KEY).",
)
def dashboard(
    namesrv_addr: str,
    host: str,
    port: int,
    data_path: str,
    login_required: bool,
    access_key: str,
    secret_key: str,
) -> None:
    """Serve the web dashboard until Ctrl-C.

    \b
    Example:
      rocketq dashboard -n 127.0.0.1:9876 --port 8080   # then open http://127.0.0.1:8080
      rocketq dashboard --login-required --data-path ~/.rocketq/dashboard
    """
    import uvicorn

    from rocketq.dashboard import create_app

    root = Path(data_path).expanduser()
    users = root / "users.properties"
    if login_required and not users.exists():
        raise click.ClickException(
            f"--login-required: {users} does not exist; write one user a line "
            "(admin=<password>,1 for an admin, user=<password> for a read-only user) or "
            "choose another --data-path"
        )
    try:
        listener = socket.create_server((host, port))  # a taken port fails here, in one line
    except OSError as exc:
        raise click.ClickException(port_line(exc, {port: "--port"}, host)) from None
    app = create_app(
        namesrv_addr,
        data_path=root,
        login_required=login_required,
        access_key=access_key,
        secret_key=secret_key,
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="info"))
    server.run(sockets=[listener])
