"""/metrics of the broker and the name server: RocketMQ 5's names with the figures the traffic
made, read directly and through a real Prometheus server scraping them on loopback."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from rocketq.testing.wait import until
from tests.broker.metrics_cluster import (
    BEHIND,
    CONSUMED,
    GROUP,
    TOPIC,
    metrics_cluster,
    sample,
    scrape,
)

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


async def test_broker_metrics_count_messages_in_and_out_and_the_groups_lag(
    tmp_path: Path,
) -> None:
    async with metrics_cluster(tmp_path) as cluster:
        broker = scrape(cluster.broker_metrics_url)
        namesrv = scrape(cluster.namesrv_metrics_url)
    node = {"cluster": "DefaultCluster", "node_type": "broker", "node_id": "broker-a"}
    total = CONSUMED + BEHIND
    assert sample(broker, "rocketmq_messages_in_total", topic=TOPIC, **node) == total
    assert sample(broker, "rocketmq_throughput_in_total", topic=TOPIC) > total * 50
    assert sample(broker, "rocketmq_messages_out_total", topic=TOPIC, consumer_group=GROUP) == (
        CONSUMED
    )
    assert sample(broker, "rocketmq_consumer_lag_messages", topic=TOPIC, consumer_group=GROUP) == (
        BEHIND
    )
    assert (
        sample(broker, "rocketmq_consumer_inflight_messages", topic=TOPIC, consumer_group=GROUP)
        == 0
    )
    assert 0 < sample(broker, "rocketmq_brokeruntime_commitlog_disk_ratio") < 1
    assert sample(broker, "rocketmq_storage_size", storage_type="local") > 0
    assert sample(broker, "rocketmq_storage_dispatch_behind_bytes") >= 0
    assert sample(broker, "rocketmq_topic_number") >= 2  # the test's topic and system topics
    assert sample(broker, "rocketmq_consumer_group_number") >= 1
    assert sample(broker, "rocketmq_message_size_bucket", topic=TOPIC, le="1024") == total
    assert sample(broker, "rocketmq_message_size_count", topic=TOPIC) == total
    sends = sample(broker, "rocketmq_rpc_latency_count", request_code="310", response_code="0")
    assert sends == total  # SEND_MESSAGE_V2 answered SUCCESS, once per message
    assert sample(broker, "rocketmq_rpc_latency_bucket", request_code="310", le="+Inf") == total
    routes = sample(namesrv, "rocketmq_rpc_latency_count", request_code="105", response_code="0")
    assert routes >= 1  # GET_ROUTEINFO_BY_TOPIC from the clients
    assert sample(namesrv, "rocketmq_namesrv_live_brokers") == 1


def prometheus_port(log_path: Path) -> int | None:
    """The port Prometheus bound (``--web.listen-address=127.0.0.1:0``; its web listener logs
    ``msg="Listening on" address=127.0.0.1:<port>``), None until it has."""
    found = re.search(r'msg="Listening on" address=127\.0\.0\.1:(\d+)', log_path.read_text())
    return None if found is None else int(found.group(1))


def prometheus_query(base: str, query: str) -> list[dict[str, object]]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': query})}"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            answer = json.loads(response.read())
    except OSError:
        return []
    return list(answer["data"]["result"]) if answer.get("status") == "success" else []


@pytest.mark.slow
@pytest.mark.timeout(90)
async def test_a_real_prometheus_scrapes_our_series_from_broker_and_name_server(
    tmp_path: Path,
) -> None:
    if not Path(PROMETHEUS).exists():  # noqa: ASYNC240 -- one stat before the test
        pytest.skip("Debian's prometheus is not installed (make test installs it)")
    async with metrics_cluster(tmp_path) as cluster:
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n"
            f"  - job_name: broker\n    static_configs:\n"
            f"      - targets: ['{cluster.broker_metrics_url.split('/')[2]}']\n"
            "        labels: {Cluster: DefaultCluster, Env: test}\n"  # rocketmq_exporter.json's
            f"  - job_name: namesrv\n    static_configs:\n"
            f"      - targets: ['{cluster.namesrv_metrics_url.split('/')[2]}']\n"
        )
        log = (tmp_path / "prometheus.log").open("wb")
        proc = subprocess.Popen(  # noqa: ASYNC220 -- Popen returns at once; stopped by PID
            [
                PROMETHEUS,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                "--web.listen-address=127.0.0.1:0",  # any free port, read from its log
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            log_path = tmp_path / "prometheus.log"
            assert await until(lambda: prometheus_port(log_path) is not None, 30, 0.2), (
                log_path.read_text()[-2000:]
            )
            base = f"http://127.0.0.1:{prometheus_port(log_path)}"
            query = f'rocketmq_messages_in_total{{topic="{TOPIC}",job="broker"}}'
            assert await until(lambda: bool(prometheus_query(base, query)), 60, 0.5), (
                tmp_path / "prometheus.log"
            ).read_text()[-2000:]
            lag = prometheus_query(
                base, f'rocketmq_consumer_lag_messages{{consumer_group="{GROUP}"}}'
            )
            rpc = 'sum(rocketmq_rpc_latency_count{job="namesrv",request_code="105"})'
            assert await until(lambda: bool(prometheus_query(base, rpc)), 30, 0.5)
            series = prometheus_query(base, query)
            # rocketmq_exporter.json's lag panel, its variables filled in
            diff = prometheus_query(
                base,
                'sum(rocketmq_group_diff{Cluster="DefaultCluster",Env="test",topic=~"'
                f'{TOPIC}",group=~"{GROUP}"}}) by (group,topic)',
            )
        finally:
            proc.terminate()
            proc.wait(timeout=20)
            log.close()
    assert float(series[0]["value"][1]) == CONSUMED + BEHIND  # type: ignore[index]
    assert float(lag[0]["value"][1]) == BEHIND  # type: ignore[index]
    assert series[0]["metric"]["node_type"] == "broker"  # type: ignore[index]
    assert float(diff[0]["value"][1]) == BEHIND  # type: ignore[index]
    assert diff[0]["metric"] == {"group": GROUP, "topic": TOPIC}


async def test_broker_conf_keys_turn_metrics_on_and_choose_the_port(tmp_path: Path) -> None:
    from rocketq.broker.config import BrokerConfig
    from rocketq.testing.broker import run_broker

    config = BrokerConfig.from_properties(
        {
            "metricsExporterType": "PROM",
            "metricsPromExporterHost": "127.0.0.1",
            "metricsPromExporterPort": "0",
        }
    )
    assert BrokerConfig().metrics_exporter_type == "DISABLE"
    async with run_broker(tmp_path / "store", config=config) as broker:
        assert broker.metrics_exporter is not None
        families = scrape(broker.metrics_exporter.url)
    assert sample(families, "rocketmq_broker_permission") == 6
    assert broker.metrics_exporter is None or broker.metrics_exporter.port > 0
