"""The false-election soak: the controller profile under full SYNC load with no fault; every
election after the group's first is a false one (a healthy master replaced).

    python -m rocketq.testing.failover.soak --minutes 30 [--producers 8]

Three ``rocketq namesrv`` processes with embedded controllers and a group of three ``rocketq
broker`` processes, the issue's controller profile as written (``allAckInSyncStateSet=true``,
``haMaxTimeSlaveNotCatchup=5000``, ``brokerHeartbeatInterval=500``,
``controllerHeartBeatTimeoutMills=3000``, ``scanNotActiveBrokerInterval=500``), SYNC producers
sending as fast as the group answers. Elections are counted by the controllers' own
``rocketmq_election_total`` series (RocketMQ 5's ControllerMetricsManager), scraped from each
name server's ``/metrics``, summed over the three, and cross-checked with the master epoch the
controller names. Exits 1 on any election after the initial one (or a changed master epoch).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rocketq.testing.failover.cluster import ISSUE_PROFILE, FaultCluster
from rocketq.testing.failover.load import Ledger, Load, Route

BROKER_NAME = "broker-a"
SAMPLE_S = 5.0  # how often the elections are counted and the ledger trimmed
#: every producer process has its first SEND_OK within this (eight interpreters starting on
#: a loaded 2-core machine took more than the test's 20 s window)
LOAD_UP_S = 120.0
ELECTION_LINE = re.compile(
    r"^rocketmq_election_total\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)$", re.MULTILINE
)


@dataclass
class SoakReport:
    seconds: float = 0.0
    acked: int = 0
    failed_sends: int = 0
    initial_epoch: int = 0
    final_epoch: int = 0
    elections: Counter[str] = field(default_factory=Counter)  # by election_result
    samples: list[str] = field(default_factory=list)

    @property
    def new_masters(self) -> int:
        return self.elections["new_master_elected"]

    @property
    def false_elections(self) -> int:
        """Elections after the initial one: by the metric, or by the epoch if it says more."""
        return max(self.new_masters - 1, self.final_epoch - self.initial_epoch, 0)

    def lines(self) -> list[str]:
        return [
            f"soak {self.seconds:.0f} s under full SYNC load, no fault: acked {self.acked}, "
            f"failed sends {self.failed_sends}",
            f"rocketmq_election_total by result {dict(self.elections)}; master epoch "
            f"{self.initial_epoch} -> {self.final_epoch}",
            f"false elections {self.false_elections}"
            + ("" if not self.false_elections else "  VIOLATION"),
        ]


def elections_of(text: str) -> Counter[str]:
    """``rocketmq_election_total`` of one ``/metrics`` page, summed by election_result."""
    counts: Counter[str] = Counter()
    for match in ELECTION_LINE.finditer(text):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match["labels"]))
        counts[labels.get("election_result", "")] += int(float(match["value"]))
    return counts


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
        return str(page.read().decode())


class SoakCluster(FaultCluster):
    """The fault suite's cluster (issue 20's profile, three controllers) with one group of
    three and each name server exporting ``/metrics`` on a port of its own."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, groups={BROKER_NAME: 3}, profile=ISSUE_PROFILE)
        for nameserver in self.nameservers:
            nameserver.props.update(  # any free port: the boot line names it
                metricsExporterType="PROM",
                metricsPromExporterHost="127.0.0.1",
                metricsPromExporterPort="0",
            )

    @property
    def metrics_ports(self) -> list[int]:
        return [nameserver.metrics_port for nameserver in self.nameservers]

    async def elections(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for port in self.metrics_ports:
            total += elections_of(await asyncio.to_thread(scrape, port))
        return total


async def soak(root: Path, seconds: float, producers: int = 8) -> SoakReport:
    report = SoakReport()
    cluster = SoakCluster(root)
    ledger = Ledger()
    load: Load | None = None
    started = time.monotonic()
    try:
        await cluster.start()
        view = await cluster.wait_healthy(BROKER_NAME, 60)
        report.initial_epoch = report.final_epoch = view.master_epoch
        routes = {BROKER_NAME: Route(cluster.ctl, BROKER_NAME)}
        argv = ["--controllers", ";".join(cluster.controller_addrs)]
        argv += ["--aliases", json.dumps(cluster.links.aliases)]
        load = Load(routes, ledger, producers, 0.0, argv, root)  # unpaced: full SYNC load
        await load.start()
        await asyncio.wait_for(every_producer_acked(ledger, producers), LOAD_UP_S)
        deadline = time.monotonic() + seconds  # the window runs under the whole load
        while time.monotonic() < deadline:
            await asyncio.sleep(min(SAMPLE_S, max(0.0, deadline - time.monotonic())))
            report.acked += len(ledger.acks)
            ledger.acks.clear()  # a 30-minute ledger would hold millions of acks
            ledger.consumed.clear()
            await sample(cluster, report, started)
        await load.stop()
        load = None
    finally:
        if load is not None:
            await load.stop()
        report.acked += len(ledger.acks)
        report.failed_sends = len(ledger.failed)
        await cluster.close()
        report.seconds = time.monotonic() - started
    return report


async def every_producer_acked(ledger: Ledger, producers: int) -> None:
    """Until each of the ``producers`` has had a send acknowledged."""
    while True:
        ledger.new_ack.clear()
        if len({a.producer for a in ledger.acks}) >= producers:
            return
        await ledger.new_ack.wait()


async def sample(cluster: SoakCluster, report: SoakReport, started: float) -> None:
    report.elections = await cluster.elections()
    current = await cluster.view(BROKER_NAME)
    if current is not None:
        report.final_epoch = max(report.final_epoch, current.master_epoch)
    line = (
        f"{time.monotonic() - started:6.0f} s acked {report.acked} elections "
        f"{dict(report.elections)} epoch {report.final_epoch}"
    )
    report.samples.append(line)
    if len(report.samples) % 12 == 1:  # a progress line a minute
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--producers", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rocketq-soak-") as tmp:
        report = asyncio.run(soak(Path(tmp), args.minutes * 60, args.producers))
    print("\n".join(report.lines()))
    if report.false_elections:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
