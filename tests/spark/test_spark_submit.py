"""``spark-submit`` to a real Spark standalone cluster: the package reaches the executors.

A master and one worker (1 core) run from the installed PySpark on loopback; the job
(``submit_job.py``) is submitted in client mode with ``--py-files`` of a zip the test builds
from the source tree and ``PYSPARK_PYTHON`` naming this venv's Python (which brings
pyarrow). It copies a topic to another with ``format("rocketq")``; the target must hold
exactly the source's messages, and the executors must have imported rocketq from the zip.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from rocketq.client.blocking import Producer
from rocketq.spark.topic.offset_reader import OffsetReader
from rocketq.spark.topic.options import ReadOptions
from rocketq.spark.topic.range_reader import ReadSettings, pull_range
from rocketq.testing.background import BackgroundCluster
from tests.spark.conftest import send_many
from tests.spark.standalone import SPARK_HOME, spark_home_env, standalone_cluster, stop, tail

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(420)]
ROOT = Path(__file__).resolve().parents[2]
JOB = Path(__file__).with_name("submit_job.py")
SUBMIT_TIMEOUT_S = 300


def zip_sources(out: Path) -> Path:
    """``rocketq`` and the ``pyspark_rocketq*`` packages of ``src/`` in one zip, no caches."""
    src = ROOT / "src"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in ("rocketq", "pyspark_rocketq", "pyspark_rocketq_store"):
            for path in sorted((src / package).rglob("*.py")):
                archive.write(path, path.relative_to(src).as_posix())
    return out


def topic_messages(namesrv: str, topic: str) -> list[Any]:
    """Every message of ``topic``, pulled queue by queue (no Spark involved)."""
    options = ReadOptions.parse({"nameServer": namesrv, "subscribe": topic}, streaming=False)
    offsets = OffsetReader(options)
    mqs = offsets.queues()
    ranges = offsets.plan(offsets.earliest(mqs), offsets.latest(mqs))
    settings = ReadSettings(name_server=namesrv)
    return [msg for r in ranges for msg in pull_range(r, settings)]


def submit(master: str, py_files: Path, args: list[str], root: Path) -> None:
    """spark-submit in client mode, ``PYSPARK_PYTHON`` naming this venv's Python.

    The environment variable, not ``spark.pyspark.python``: Spark's automatic lookup of
    ``pyspark_*`` data sources runs ``PYSPARK_PYTHON`` (or ``python3``) and ignores the conf.
    """
    env = {**spark_home_env(root), "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_DRIVER_PYTHON", None)
    root.mkdir(parents=True, exist_ok=True)
    log = root / "submit.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(SPARK_HOME / "bin" / "spark-submit"),
                *("--master", master, "--deploy-mode", "client", "--py-files", str(py_files)),
                *("--conf", "spark.executor.memory=512m", "--conf", "spark.ui.enabled=false"),
                *("--conf", "spark.driver.host=127.0.0.1", str(JOB), *args),
            ],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        code = process.wait(SUBMIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        stop(process)
    assert code == 0, f"spark-submit ended {code}:\n{tail(log)}"


def assert_copied(namesrv: str, target: str, report: Path, master: str, py_files: Path) -> None:
    done = json.loads(report.read_text())
    assert done["master"] == master
    assert done["rows"] == 40
    assert done["rocketq"]  # where the executors' Python workers imported rocketq from
    assert all(py_files.name in where for where in done["rocketq"])
    copied = topic_messages(namesrv, target)
    by_body = {m.body.decode(): m for m in copied}
    assert len(copied) == len(by_body) == 40
    for i in range(40):
        msg = by_body[f"m-{i}"]
        assert msg.keys == [f"m-key-{i}", f"extra-{i}"]
        assert msg.tags == ("even" if i % 2 == 0 else "odd")
        assert msg.get_property("seq") == str(i)


def test_spark_submit_to_a_standalone_cluster_copies_a_topic_exactly_with_py_files(
    cluster: BackgroundCluster, producer: Producer, topic: str, tmp_path: Path
) -> None:
    send_many(producer, topic, 40)
    target, report = f"{topic}Submitted", tmp_path / "report.json"
    cluster.create_topic(target, queues=2)
    py_files = zip_sources(tmp_path / "rocketq-src.zip")
    with standalone_cluster(tmp_path / "spark") as master:
        args = [cluster.namesrv_addr, topic, target, str(report)]
        submit(master, py_files, args, tmp_path / "driver")
    assert_copied(cluster.namesrv_addr, target, report, master, py_files)
    assert list((tmp_path / "spark" / "work").glob("app-*"))  # the worker ran the executor
