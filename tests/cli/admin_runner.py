"""``rocketq admin`` through click's CliRunner in a worker thread (the servers live on the
test's loop), with the name server of a test cluster."""

from __future__ import annotations

import asyncio

from click.testing import CliRunner, Result

from rocketq.cli.admin import admin
from rocketq.testing.cluster import Cluster


async def run(cluster: Cluster | None, *args: str) -> Result:
    ns = ["-n", cluster.addr] if cluster is not None else []
    argv = [*args[:1], *ns, *args[1:]]
    return await asyncio.to_thread(CliRunner().invoke, admin, argv)


def ok(result: Result) -> str:
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout
