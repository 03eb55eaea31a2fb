"""``rocketq store``: inspect a store directory offline (``dump``) and verify it (``check``).

Both read the files directly (read-only maps, no ``lock``), so they work on a stopped or
crashed store and on one written by Apache RocketMQ.
"""

from __future__ import annotations

import itertools
import os
import sys
from typing import Any

import click

from rocketq.store.check import NotAStoreError, check_store, require_store
from rocketq.store.config import StoreConfig
from rocketq.store.dump import (
    CQ_UNIT_HEADER,
    RECORD_HEADER,
    DataEnd,
    IndexLayout,
    format_cq_unit,
    format_data_end,
    format_index_entry,
    format_index_file,
    format_record,
    index_files,
    iter_commitlog_records,
    iter_consume_queue,
    iter_index_file,
    read_index_header,
    store_paths,
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
SLOTS_OPTION = click.option(
    "--max-hash-slot-num",
    type=click.IntRange(min=1),
    default=None,
    help="Index slots per file (default 5000000, else inferred from the file size).",
)


@click.group()
def store() -> None:
    """Inspect and check a store directory (ours or Apache RocketMQ's).

    \b
    Example:
      rocketq store check --store ~/store
    """


@store.command()
@STORE_OPTION
@CONFIG_OPTION
@SLOTS_OPTION
@click.option("--consume-queue", "queue", default=None, metavar="TOPIC:QID", help="Dump a queue.")
@click.option("--index", "show_index", is_flag=True, help="Dump the index files.")
@click.option(
    "--from-offset",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Commitlog offset of the first record to print (a record start).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Rows at most (records, queue units, or entries per index file).",
)
def dump(
    store_dir: str,
    config_file: str | None,
    max_hash_slot_num: int | None,
    queue: str | None,
    show_index: bool,
    from_offset: int,
    limit: int,
) -> None:
    """Print commitlog records (from --from-offset), or a consume queue, or the index files.

    \b
    Example:
      rocketq store dump --store ~/store --consume-queue TopicTest:0 --limit 20
    """
    config = _config(config_file)
    if queue is not None:
        topic, _, qid = queue.rpartition(":")
        if not topic or not qid.isdigit():
            raise click.BadParameter("expected TOPIC:QID", param_hint="--consume-queue")
        queue_dir = os.path.join(store_paths(store_dir).consume_queue, topic, qid)
        if not os.path.isdir(queue_dir):
            raise click.ClickException(f"no consume queue {topic}:{qid} ({queue_dir})")
        click.echo(CQ_UNIT_HEADER)
        for unit in itertools.islice(iter_consume_queue(store_dir, topic, int(qid)), limit):
            click.echo(format_cq_unit(unit))
    elif show_index:
        _dump_index(store_dir, IndexLayout.of(config, max_hash_slot_num), limit)
    else:
        _dump_commitlog(store_dir, config, from_offset, limit)


@store.command()
@STORE_OPTION
@CONFIG_OPTION
@SLOTS_OPTION
@click.option(
    "--require-consume-queues/--no-require-consume-queues",
    default=True,
    show_default=True,
    help="Whether a topic with no consume queue directory at all is a problem.",
)
def check(
    store_dir: str,
    config_file: str | None,
    max_hash_slot_num: int | None,
    require_consume_queues: bool,
) -> None:
    """Verify CRCs, consume queue units and index entries; exit 1 on any mismatch, 2 if the
    folder is not a store. A store a broker is running on is checked up to the commitlog
    end the check read; what was written after that is counted, not checked.

    Progress of the commit log scan goes to stderr.

    \b
    Example:
      rocketq store check --store ~/store
    """
    config = _config(config_file)
    try:
        require_store(store_dir, store_paths(store_dir, config).commit_log)
    except NotAStoreError as exc:
        raise NotAStore(str(exc)) from exc
    bar: Any = click.progressbar(length=1, label="checking the commit log", file=sys.stderr)
    seen = [0]

    def progress(done: int, total: int) -> None:
        bar.length = max(total, 1)
        bar.update(done - seen[0])
        seen[0] = done

    with bar:
        report = check_store(
            store_dir,
            config=config,
            require_consume_queues=require_consume_queues,
            index_layout=IndexLayout.of(config, max_hash_slot_num),
            progress=progress,
        )
    click.echo(str(report))
    sys.exit(0 if report.ok else 1)


class NotAStore(click.ClickException):
    """One line, exit 2: the folder is not a store (1 means a store with problems)."""

    exit_code = 2


def _config(config_file: str | None) -> StoreConfig | None:
    """The broker.conf's store keys (``--store`` stays the root whatever the file says)."""
    return None if config_file is None else StoreConfig.from_broker_conf(config_file)


def _dump_commitlog(root: str, config: StoreConfig | None, from_offset: int, limit: int) -> None:
    click.echo(RECORD_HEADER)
    shown = 0
    for item in iter_commitlog_records(root, config=config, from_offset=from_offset):
        if isinstance(item, DataEnd):
            click.echo(format_data_end(item))
            continue
        if shown >= limit:
            click.echo(f"... stopped after {limit} records (--limit)")
            return
        click.echo(format_record(item))
        shown += 1


def _dump_index(root: str, layout: IndexLayout, limit: int) -> None:
    for path in index_files(root):
        info = read_index_header(path, layout)
        if info is None:
            click.echo(f"{path}: the size fits no index layout (try --max-hash-slot-num)")
            continue
        click.echo(format_index_file(info))
        for entry in itertools.islice(iter_index_file(info), limit):
            click.echo(format_index_entry(entry))
