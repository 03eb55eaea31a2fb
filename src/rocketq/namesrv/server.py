"""NamesrvController: wires RouteInfoManager, KV config and the processor to a RemotingServer.

It scans for silent brokers every ``scan_not_active_broker_interval_ms`` and drops a broker as
soon as the connection it registered through closes (RocketMQ's BrokerHousekeepingService).
``start_namesrv(port=0)`` starts one in-process on 127.0.0.1 for tests of other packages.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable

from rocketq.common.clock import now_ms
from rocketq.errors import IllegalStateError
from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.kv_config import KVConfigManager
from rocketq.namesrv.processor import DefaultRequestProcessor
from rocketq.namesrv.route_info import RouteInfoManager
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.metrics_exporter import MetricsExporter
from rocketq.remoting.rpc_stats import RpcLatencyStats
from rocketq.remoting.server import RemotingServer

log = logging.getLogger(__name__)


class NamesrvController:
    def __init__(
        self, config: NamesrvConfig | None = None, *, clock: Callable[[], int] = now_ms
    ) -> None:
        self.config = config or NamesrvConfig()
        self.route_info_manager = RouteInfoManager(
            broker_channel_expired_time_ms=self.config.broker_channel_expired_time_ms,
            clock=clock,
        )
        self.kv_config_manager = KVConfigManager(self.config.kv_config_path)
        self.remoting_server = RemotingServer(
            channel_idle_timeout_s=self.config.server_channel_max_idle_time_s
        )
        self.processor = DefaultRequestProcessor(
            self.config, self.route_info_manager, self.kv_config_manager
        )
        self._scan_task: asyncio.Task[None] | None = None
        self.rpc_latency_stats = RpcLatencyStats()
        self.remoting_server.add_response_listener(self.rpc_latency_stats.on_response)
        self.metrics_exporter: MetricsExporter | None = None

    @property
    def port(self) -> int:
        return self.remoting_server.port

    @property
    def addr(self) -> str:
        """An address clients can use (loopback when listening on all interfaces)."""
        host = self.remoting_server.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        return f"{host}:{self.port}"

    async def start(self) -> int:
        if self._scan_task is not None:
            raise IllegalStateError("name server already started")
        self.kv_config_manager.load()
        self.processor.register_to(self.remoting_server)
        self.remoting_server.add_channel_close_listener(self._on_channel_close)
        port = await self.remoting_server.start(self.config.listen_host, self.config.listen_port)
        self._scan_task = asyncio.get_running_loop().create_task(self._scan_loop())
        if self.config.metrics_exporter_type.upper() == "PROM":
            from rocketq.namesrv.metrics import NamesrvMetricsCollector

            self.metrics_exporter = MetricsExporter(NamesrvMetricsCollector(self))
            self.metrics_exporter.start(
                self.config.metrics_prom_exporter_host, self.config.metrics_prom_exporter_port
            )
        log.info("name server listening on %s:%d", self.remoting_server.host, port)
        return port

    async def shutdown(self) -> None:
        task, self._scan_task = self._scan_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.remoting_server.stop()
        exporter, self.metrics_exporter = self.metrics_exporter, None
        if exporter is not None:
            await asyncio.to_thread(exporter.stop)
        log.info("name server stopped")

    def scan_not_active_broker(self) -> list[str]:
        """Drop expired brokers and close their connections; returns their addresses."""
        dropped = []
        for live in self.route_info_manager.scan_not_active_broker():
            if isinstance(live.channel, RemotingChannel):
                log.warning("broker channel expired: %s", live.channel.remote_addr)
                live.channel.close()
                dropped.append(live.channel.remote_addr)
        return dropped

    async def _scan_loop(self) -> None:
        interval_s = self.config.scan_not_active_broker_interval_ms / 1000
        while True:
            await asyncio.sleep(interval_s)
            try:
                self.scan_not_active_broker()
            except Exception:  # the periodic scan outlives one failed round; logged
                log.exception("scan of inactive brokers failed")

    def _on_channel_close(self, channel: RemotingChannel) -> None:
        broker_addr = self.route_info_manager.on_channel_destroy(channel.remote_addr, channel)
        if broker_addr is not None:
            log.info(
                "broker %s removed: its connection %s closed", broker_addr, channel.remote_addr
            )

    async def __aenter__(self) -> NamesrvController:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()


async def start_namesrv(
    port: int = 0,
    *,
    config: NamesrvConfig | None = None,
    clock: Callable[[], int] = now_ms,
) -> NamesrvController:
    """Start a name server on 127.0.0.1 (port 0: any free port); call ``shutdown()`` after."""
    base = config or NamesrvConfig()
    controller = NamesrvController(
        dataclasses.replace(base, listen_host="127.0.0.1", listen_port=port), clock=clock
    )
    await controller.start()
    return controller
