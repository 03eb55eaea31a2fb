"""``rocketq store``: inspect a store directory offline (``dump``) and verify it (``check``)."""

from __future__ import annotations

import datetime
import itertools
import os
import sys

import click

from rocketq.store.check import check_store, store_paths
from rocketq.store.config import StoreConfig
from rocketq.store.dump import (
    DataEnd,
    IndexLayout,
    index_files,
    iter_commitlog,
    iter_consume_queue,
    read_index_file,
)

STORE_OPTION = click.option(
    "--store",
    "store_dir",
    required=True,
    type=click.Path(exists=True, file_okay=False),
    help="Store root (storePathRootDir).",
)
CONFIG_OPTION = click.option(
    "-c",
    "--config-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="broker.conf (storePathCommitLog, maxHashSlotNum, maxIndexNum).",
)


@click.group()
def store() -> None:
    """Inspect and check a store directory (ours or Apache RocketMQ's)."""


@store.command()
@STORE_OPTION
@CONFIG_OPTION
@click.option("--consume-queue", "queue", default=None, metavar="TOPIC:QID", help="Dump a queue.")
@click.option("--index", "show_index", is_flag=True, help="Dump the index files.")
@click.option("--from-offset", type=int, default=0, show_default=True, help="Commitlog offset.")
@click.option("--limit", type=int, default=1000, show_default=True, help="Rows at most.")
def dump(
    store_dir: str,
    config_file: str | None,
    queue: str | None,
    show_index: bool,
    from_offset: int,
    limit: int,
) -> None:
    """Print commitlog records, or a consume queue, or the index files."""
    config = _config(store_dir, config_file)
    commit_log, cq_root, index_dir = store_paths(store_dir, config)
    if queue is not None:
        topic, _, qid = queue.rpartition(":")
        if not topic or not qid.isdigit():
            raise click.BadParameter("expected TOPIC:QID", param_hint="--consume-queue")
        _dump_queue(cq_root, topic, int(qid), limit)
    elif show_index:
        _dump_index(index_dir, config, limit)
    else:
        _dump_commitlog(commit_log, from_offset, limit)


@store.command()
@STORE_OPTION
@CONFIG_OPTION
def check(store_dir: str, config_file: str | None) -> None:
    """Verify CRCs, consume queue units and index entries; exit 1 on any mismatch."""
    report = check_store(store_dir, config=_config(store_dir, config_file))
    click.echo(str(report))
    sys.exit(0 if report.ok else 1)


def _config(store_dir: str, config_file: str | None) -> StoreConfig | None:
    if config_file is None:
        return None
    config = StoreConfig.from_broker_conf(config_file)
    if not config.store_path_commit_log:
        return _with_root(config, store_dir)
    return config


def _with_root(config: StoreConfig, root: str) -> StoreConfig:
    import dataclasses

    return dataclasses.replace(config, store_path_root_dir=os.path.abspath(root))


def _dump_commitlog(commit_log: str, from_offset: int, limit: int) -> None:
    click.echo(
        f"{'offset':>14} {'topic':<24} {'queue':>5} {'qoffset':>9} {'tags':<12} "
        f"{'keys':<20} {'body':>8} crc"
    )
    for shown, item in enumerate(iter_commitlog(commit_log, from_offset)):
        if isinstance(item, DataEnd):
            state = "end of data" if item.clean else "INVALID"
            click.echo(f"{item.offset:>14} {state}: {item.reason} ({item.path})")
            return
        if shown >= limit:
            click.echo(f"... stopped after {limit} records (--limit)")
            return
        click.echo(
            f"{item.offset:>14} {item.topic:<24} {item.queue_id:>5} {item.queue_offset:>9} "
            f"{item.tags:<12} {item.keys:<20} {item.body_size:>8} "
            f"{'ok' if item.crc_ok else 'BAD'}"
        )


def _dump_queue(cq_root: str, topic: str, qid: int, limit: int) -> None:
    click.echo(f"{'qoffset':>9} {'commitlog offset':>16} {'size':>10} {'tags code':>20}")
    for unit in itertools.islice(iter_consume_queue(cq_root, topic, qid), limit):
        click.echo(
            f"{unit.queue_offset:>9} {unit.commit_log_offset:>16} {unit.size:>10} "
            f"{unit.tags_code:>20}"
        )


def _dump_index(index_dir: str, config: StoreConfig | None, limit: int) -> None:
    layout = IndexLayout()
    if config is not None:
        layout = IndexLayout(config.max_hash_slot_num, config.max_index_num)
    for path in index_files(index_dir):
        info = read_index_file(path, layout)
        if info is None:
            click.echo(f"{path}: size fits no index layout")
            continue
        click.echo(
            f"{path}: {info.index_count - 1} entries, {info.hash_slot_count} slots used, "
            f"time {_ms(info.begin_timestamp)} .. {_ms(info.end_timestamp)}, "
            f"offsets {info.begin_phy_offset} .. {info.end_phy_offset}"
        )
        for e in info.entries[:limit]:
            click.echo(
                f"  #{e.index_no:<8} hash {e.key_hash:>11} offset {e.phy_offset:>14} "
                f"+{e.time_diff_s}s prev {e.prev_index}"
            )


def _ms(ms: int) -> str:
    if ms <= 0:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).isoformat(timespec="milliseconds")
