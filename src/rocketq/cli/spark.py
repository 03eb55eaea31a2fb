"""``rocketq spark``: Spark jobs over store directories (export, stats, rebuild).

Each command starts a SparkSession (``--master``, default ``local[*]``) unless one is
already active in the process, and stops only a session it started. Store paths must be
readable by every executor (a copy of the store, or shared storage).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

from rocketq.store.config import StoreConfig

STORES_OPTION = click.option(
    "--store",
    "stores",
    required=True,
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    help="Store root (storePathRootDir); repeat for several brokers.",
)
BROKER_OPTION = click.option(
    "--broker-name",
    "broker_names",
    multiple=True,
    help="The broker column per --store, in order (default: each store's directory name).",
)
MASTER_OPTION = click.option(
    "--master", default="local[*]", show_default=True, help="Spark master URL."
)
SPLIT_OPTION = click.option(
    "--split-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Bytes per input split inside a commitlog segment (default 64 MiB).",
)
CORRUPT_OPTION = click.option(
    "--skip-corrupt",
    is_flag=True,
    help="Skip records that do not decode or fail their CRC (default: fail with the offset).",
)


@click.group()
def spark() -> None:
    """Spark jobs over store files: export to Parquet, statistics, queue and index rebuild.

    \b
    Example:
      rocketq spark stats --store ~/store
    """


@spark.command()
@STORES_OPTION
@BROKER_OPTION
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Parquet folder.")
@click.option("--overwrite", is_flag=True, help="Replace --out if it exists.")
@MASTER_OPTION
@SPLIT_OPTION
@CORRUPT_OPTION
def export(
    stores: tuple[str, ...],
    broker_names: tuple[str, ...],
    out: str,
    overwrite: bool,
    master: str,
    split_bytes: int | None,
    skip_corrupt: bool,
) -> None:
    """Write every record as Parquet partitioned by topic and (UTC) date.

    Stage progress goes to stderr.

    \b
    Example:
      rocketq spark export --store /data/broker-a --store /data/broker-b --out /data/parquet
    """
    from rocketq.spark.store.jobs import export_parquet

    if os.path.exists(out) and not overwrite:
        raise click.ClickException(f"{out} exists; pass --overwrite to replace it")
    with _session(master) as session:
        result = export_parquet(
            session,
            list(stores),
            out,
            overwrite=overwrite,
            progress=_progress,
            broker_names=broker_names,
            split_bytes=split_bytes,
            skip_corrupt=skip_corrupt,
        )
    click.echo(
        f"exported {result.rows} records ({result.commitlog_bytes / 2**20:.1f} MiB of commitlog)"
        f" in {result.seconds:.1f} s ({result.mib_per_s:.1f} MiB/s) to {out}"
    )


@spark.command()
@STORES_OPTION
@BROKER_OPTION
@MASTER_OPTION
@SPLIT_OPTION
@CORRUPT_OPTION
def stats(
    stores: tuple[str, ...],
    broker_names: tuple[str, ...],
    master: str,
    split_bytes: int | None,
    skip_corrupt: bool,
) -> None:
    """Messages and bytes per topic, tag and hour; queue offsets and their gaps.

    \b
    Example:
      rocketq spark stats --store /data/broker-a --master "local[4]"
    """
    from rocketq.spark.store.jobs import store_stats

    with _session(master) as session:
        result = store_stats(
            session,
            list(stores),
            broker_names=broker_names,
            split_bytes=split_bytes,
            skip_corrupt=skip_corrupt,
        )
    click.echo(f"{'topic':<32} {'messages':>10} {'bytes':>14}")
    for topic, n, size in result.topics:
        click.echo(f"{topic:<32} {n:>10} {size:>14}")
    click.echo(f"\n{'topic':<32} {'tag':<20} {'messages':>10} {'bytes':>14}")
    for topic, tag, n, size in result.tags:
        click.echo(f"{topic:<32} {tag or '-':<20} {n:>10} {size:>14}")
    click.echo(f"\n{'topic':<32} {'hour (UTC)':<17} {'messages':>10} {'bytes':>14}")
    for topic, hour_ms, n, size in result.hours:
        hour = datetime.datetime.fromtimestamp(hour_ms / 1000, datetime.UTC)
        click.echo(f"{topic:<32} {hour:%Y-%m-%d %H:00} {n:>10} {size:>14}")
    click.echo(f"\n{'broker':<16} {'topic':<32} {'queue':>5} {'messages':>10} {'offsets':>17}")
    for broker, topic, qid, n, lo, hi in result.queues:
        click.echo(f"{broker:<16} {topic:<32} {qid:>5} {n:>10} {f'{lo}..{hi}':>17}")
    click.echo(f"\nqueue gaps: {len(result.gaps)}")
    for broker, topic, qid, first, last in result.gaps:
        click.echo(f"  {broker} {topic}:{qid} missing offsets {first}..{last}")


@spark.command()
@click.option(
    "--store",
    "store_dir",
    required=True,
    type=click.Path(exists=True, file_okay=False),
    help="Store root whose commitlog is read.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder that receives consumequeue/ and index/ (must not hold them yet).",
)
@click.option(
    "-c",
    "--config-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="broker.conf: mappedFileSizeConsumeQueue, maxHashSlotNum, maxIndexNum, delay levels.",
)
@MASTER_OPTION
@SPLIT_OPTION
def rebuild(
    store_dir: str, out: str, config_file: str | None, master: str, split_bytes: int | None
) -> None:
    """Write ConsumeQueue and IndexFile files from the commitlog (the store's own writers).

    Copy the result into the store while its broker is stopped.

    \b
    Example:
      rocketq spark rebuild --store /data/broker-a --out /data/rebuilt -c broker.conf
    """
    from rocketq.spark.store.rebuild import rebuild as run_rebuild

    config = StoreConfig() if config_file is None else StoreConfig.from_broker_conf(config_file)
    for name in ("consumequeue", "index"):
        if os.path.exists(os.path.join(out, name)):
            raise click.ClickException(
                f"{os.path.join(out, name)} exists; rebuild writes a fresh tree"
            )
    os.makedirs(out, exist_ok=True)
    with _session(master) as session:
        result = run_rebuild(
            session, store_dir, out, config, progress=_progress, split_bytes=split_bytes
        )
    click.echo(f"{len(result.queues)} consume queues, {result.units} units")
    for topic, qid, _units, gaps in result.queues:
        if gaps:
            click.echo(
                f"  {topic}:{qid}: {gaps} gaps filled with blank units (commitlog data lost)"
            )
    click.echo(f"{len(result.index_files)} index files, {result.index_keys} keys")


def _progress(line: str) -> None:
    click.echo(line, err=True)


@contextlib.contextmanager
def _session(master: str) -> Iterator[Any]:
    """The active SparkSession, or a new one stopped on exit."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise click.ClickException("pyspark is missing: pip install 'rocketq[spark]'") from exc
    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master(master)
        .appName("rocketq spark")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    try:
        yield session
    finally:
        session.stop()
