"""One name server, one broker and rocketq's gRPC endpoint for a whole test module, on a
background loop thread (the tests block on the 5.x client's subprocess meanwhile), with the
admin CLI for topics and groups, as an operator would make them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.cli.admin import admin
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.server import GrpcServer
from rocketq.testing.background import BackgroundCluster
from rocketq.testing.store import small_store_properties
from tests.interop.rmq5_runner import drive_rmq5

# fast timers and revives, transaction checks within about a second
STORE = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
BROKER: dict[str, Any] = {
    "revive_interval_ms": 100,
    "enable_property_filter": True,  # SQL92 filters
    "transaction_time_out_ms": 1000,
    "transaction_check_interval_ms": 1000,
}
RETRY_ONCE_FAST = '{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000]}}'


@dataclass
class Rmq5Env:
    cluster: BackgroundCluster
    server: GrpcServer
    root: Path
    runs: int = 0

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    @property
    def broker(self) -> Any:
        return self.cluster.brokers["broker-a"]

    def admin(self, command: str, *args: str) -> str:
        argv = [command, "-n", self.cluster.namesrv_addr, *args]
        result = CliRunner().invoke(admin, argv)
        assert result.exit_code == 0, (argv, result.output, result.exception)
        return result.output

    def topic(self, name: str, message_type: str = "NORMAL", queues: int = 4) -> str:
        self.admin(
            "updateTopic", "-b", self.broker.broker_addr, "-t", name, "-r", str(queues),
            "-w", str(queues), "-a", f"+message.type={message_type}",
        )  # fmt: skip
        return name

    def group(self, name: str, *args: str) -> str:
        self.admin("updateSubGroup", "-b", self.broker.broker_addr, "-g", name, *args)
        return name

    def drive(
        self, scenario: str, *args: str, timeout_s: float = 60.0, endpoint: str = "", **kw: Any
    ) -> list[Any]:
        self.runs += 1
        home = self.root / "homes" / f"{self.runs}-{scenario}"
        target = endpoint or self.endpoint
        return drive_rmq5(target, scenario, *args, home=home, timeout_s=timeout_s, **kw)


@contextlib.contextmanager
def rmq5_env(
    root: Path,
    proxy: ProxyConfig | None = None,
    acl: PlainPermissionManager | None = None,
    **broker: Any,
) -> Iterator[Rmq5Env]:
    """``acl``: the endpoint checks clients against its accounts (aclEnable)."""
    with BackgroundCluster(root, store_properties=STORE, **{**BROKER, **broker}) as cluster:
        server = GrpcServer.over_namesrv(
            proxy or ProxyConfig(grpc_server_port=0), cluster.namesrv_addr, acl
        )
        cluster.run(server.start("127.0.0.1"))
        try:
            yield Rmq5Env(cluster, server, root)
        finally:
            cluster.run(server.stop())
