"""``deliveryGuarantee=exactly_once``: the sink on RocketMQ transactional (half) messages.

Theory of operation (docs/spark.md, "Writing"). Tasks send their rows as *half messages*
(stored, not delivered) tagged ``SPARK_TXN=<writeId>:<batchId>``, and return the halves' handles
as their commit message; nothing a task sends is visible yet. Rows of one topic go as
transactional batches (rocketq's extension, broker/transaction_batch.py: up to
``maxBatchMessages`` / ``maxBatchBytes`` rows as ONE batch half, one handle, one end, one
check-back); where a broker refuses a batch (MESSAGE_ILLEGAL: RocketMQ's broker, or rocketq's
with ``transactionBatchEnable=false``) the task sends one half per row instead, and so does
every later task of that Python worker. Spark calls the driver's
``commit(messages, batchId)`` once, after every task succeeded, with the messages of the
successful attempts only. The driver then

1. looks up ``batchId`` in the ledger (``<checkpointLocation>/rocketq-sink/<writeId>/``);
2. if the batch is not there, writes the ledger entry first (the msg ids of the handles it
   will commit, a batch half's being its first message's;
   atomic: temporary file, fsync, rename), then sends COMMIT for exactly those handles;
3. if the batch is there (a replay: the driver died after deciding, before Spark recorded the
   batch), sends ROLLBACK for the new halves: the batch's rows were committed the first time.

A half whose answer was lost may be stored although its send failed: the sink tries again
under fresh msg ids (``send_fresh``), so that copy's id is in no ledger entry and its
check-back answers ROLLBACK; the producer's own resend, which keeps the id, is off.

``abort`` rolls back what it is given. Halves of failed task attempts, and of a driver that
died between the tasks and the commit, are never listed, so never committed: when the broker
checks them back (CHECK_TRANSACTION_STATE, to any live producer of the group: the driver's
or an executor's), ``LedgerListener`` answers from the ledger: COMMIT if the half's msg id is
in its batch's entry, ROLLBACK if the batch is decided without it, UNKNOWN while the batch is
undecided (tasks may still be running). The ledger is the only state; it must be on storage
the driver and executors can read (the checkpoint location, as Spark requires for streams).

A streaming query's checkpoint is its identity (``writeId`` = ``stream``); a batch write gets
a fresh ``writeId`` per job and uses batch id 0.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from rocketq.client import LocalTransactionState, TransactionHandle, TransactionProducer
from rocketq.common import message_const as mc
from rocketq.common.message import Message, MessageExt
from rocketq.errors import (
    BrokerResponseError,
    ClientError,
    MessageIllegalError,
    RemotingError,
    RocketQError,
    SparkOptionError,
)
from rocketq.spark.topic.options import WriteOptions
from rocketq.spark.topic.sink import batch_to_messages, check_input_schema

log = logging.getLogger(__name__)

PROPERTY_SPARK_TXN = "SPARK_TXN"
HALVES_IN_FLIGHT = 64
BATCHES_IN_FLIGHT = 8
ENDS_IN_FLIGHT = 64
END_ATTEMPTS = 3
END_RETRY_PAUSE_S = 0.5
SEND_TRIES = 3  # 1 + retryTimesWhenSendFailed (DefaultMQProducer's default, 2)
DECIDED_CACHE_COUNT = 16  # decided batches kept parsed per process


_Entry = tuple[tuple[int, int, int], frozenset[str]]  # file identity, msg ids


class DecidedCache:
    """Ledger entries already parsed in this process, keyed by path and validated by the
    file's identity (inode, mtime, size): a check-back storm (a broker checking every half of
    a large batch while the driver commits it) parses an entry once instead of once per half,
    and a checkpoint deleted and reused is read afresh."""

    _entries: ClassVar[collections.OrderedDict[str, _Entry]] = collections.OrderedDict()
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def read(cls, path: Path) -> frozenset[str] | None:
        try:
            st = path.stat()
        except FileNotFoundError:
            return None  # undecided: the driver may decide it any moment
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        key = str(path)
        with cls._lock:
            entry = cls._entries.get(key)
            if entry is not None and entry[0] == stamp:
                cls._entries.move_to_end(key)
                return entry[1]
        try:
            committed = frozenset(json.loads(path.read_text())["committed"])
        except FileNotFoundError:
            return None
        with cls._lock:
            cls._entries[key] = (stamp, committed)
            while len(cls._entries) > DECIDED_CACHE_COUNT:
                cls._entries.popitem(last=False)
        return committed


@dataclass(frozen=True, slots=True)
class TxnLedger:
    """Decided batches of one write: ``<root>/<batchId>.json`` lists the msg ids committed."""

    root: str

    def path(self, batch_id: int) -> Path:
        return Path(self.root) / f"{batch_id}.json"

    def decided(self, batch_id: int) -> frozenset[str] | None:
        return DecidedCache.read(self.path(batch_id))

    def record(self, batch_id: int, msg_ids: list[str]) -> None:
        final = self.path(batch_id)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_suffix(".tmp")
        with tmp.open("w") as f:
            json.dump({"batchId": batch_id, "committed": sorted(msg_ids)}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        dir_fd = os.open(final.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


@dataclass(frozen=True, slots=True)
class LedgerListener:
    """The check-back resolver: answers from the ledger, never from a live task."""

    ledger: TxnLedger
    write_id: str

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        return LocalTransactionState.UNKNOWN  # the sink never sends in-transaction

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        tag = msg.properties.get(PROPERTY_SPARK_TXN, "")
        write_id, _, batch = tag.rpartition(":")
        if write_id != self.write_id or not batch.isdigit():
            return LocalTransactionState.UNKNOWN  # another write's half: not ours to decide
        decided = self.ledger.decided(int(batch))
        if decided is None:
            return LocalTransactionState.UNKNOWN
        committed = msg.uniq_key in decided
        return LocalTransactionState.COMMIT if committed else LocalTransactionState.ROLLBACK


class TxnProducerCache:
    """One started TransactionProducer per (name server, group, ledger) in a process."""

    _producers: ClassVar[dict[tuple[str, str, str], TransactionProducer]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def get(cls, options: WriteOptions, listener: LedgerListener) -> TransactionProducer:
        key = (options.name_server, options.producer_group, listener.ledger.root)
        with cls._lock:
            producer = cls._producers.get(key)
            if producer is None:
                producer = TransactionProducer(
                    options.producer_group,
                    listener,
                    namesrv_addr=options.name_server,
                    send_msg_timeout_s=options.send_timeout_ms / 1000,
                    retry_times_when_send_failed=0,  # the sink resends: send_fresh
                    instance_name=f"spark-txn-{uuid.uuid4().hex[:12]}",
                )
                producer.start()
                cls._producers[key] = producer
            return producer

    @classmethod
    def close(cls, options: WriteOptions, listener: LedgerListener) -> None:
        """Shut the producer of this write down (a test's cluster is about to go)."""
        key = (options.name_server, options.producer_group, listener.ledger.root)
        with cls._lock:
            producer = cls._producers.pop(key, None)
        if producer is not None:
            producer.shutdown()


@dataclass
class TxnCommitMessage(WriterCommitMessage):
    handles: list[TransactionHandle] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TxnWrite:
    """What tasks and the driver share about one transactional write (picklable)."""

    options: WriteOptions
    write_id: str
    ledger: TxnLedger

    @property
    def listener(self) -> LedgerListener:
        return LedgerListener(self.ledger, self.write_id)

    def producer(self) -> TransactionProducer:
        return TxnProducerCache.get(self.options, self.listener)


class _HalfSender:
    """One task's halves: per-topic transactional batches (one batch half each, rocketq's
    extension) while the brokers take them, one half per row once one refuses a batch
    (MESSAGE_ILLEGAL, as RocketMQ's broker does); the refusal is remembered per process."""

    refused: ClassVar[set[str]] = set()  # name servers whose brokers refused a batch half

    def __init__(self, write: TxnWrite, batch_id: int) -> None:
        self.producer = write.producer()
        self.options = write.options
        self.tag = f"{write.write_id}:{batch_id}"
        self.batched = write.options.name_server not in self.refused
        self.pending: dict[str, tuple[list[Message], int]] = {}
        self.in_flight: collections.deque[tuple[list[Message], Future[TransactionHandle]]] = (
            collections.deque()
        )
        self.handles: list[TransactionHandle] = []

    def add(self, msg: Message) -> None:
        msg.put_property(PROPERTY_SPARK_TXN, self.tag)
        if not self.batched:
            self._track([msg], self._submit_half(msg), HALVES_IN_FLIGHT)
            return
        msgs, size = self.pending.get(msg.topic, ([], 0))
        msgs.append(msg)
        size += len(msg.body) + 64
        self.pending[msg.topic] = (msgs, size)
        if len(msgs) >= self.options.max_batch_messages or size >= self.options.max_batch_bytes:
            self._send(msg.topic)

    def _submit_half(self, msg: Message) -> Future[TransactionHandle]:
        return self.producer.loop.submit(send_fresh(self.producer, [msg], None))

    def _send(self, topic: str) -> None:
        msgs, _size = self.pending.pop(topic)
        if len(msgs) == 1:  # one row: an ordinary half
            self._track(msgs, self._submit_half(msgs[0]), HALVES_IN_FLIGHT)
            return
        coro = send_fresh(self.producer, msgs, {PROPERTY_SPARK_TXN: self.tag})
        self._track(msgs, self.producer.loop.submit(coro), BATCHES_IN_FLIGHT)

    def _track(self, msgs: list[Message], future: Future[TransactionHandle], limit: int) -> None:
        """``msgs`` sent as one batch half (more than one) or one half (one)."""
        self.in_flight.append((msgs, future))
        while len(self.in_flight) >= limit:
            self._collect(*self.in_flight.popleft())

    def _collect(self, msgs: list[Message], future: Future[TransactionHandle]) -> None:
        try:
            self.handles.append(future.result())
        except MessageIllegalError as exc:
            if len(msgs) == 1:  # a single half, refused on its own merits
                raise
            if self.batched:
                log.info("a broker refused a transactional batch (%s): one half per row", exc)
            self.batched = False
            self.refused.add(self.options.name_server)
            singles = [self._submit_half(m) for m in msgs]
            self.handles.extend(f.result() for f in singles)

    def finish(self) -> TxnCommitMessage:
        for topic in list(self.pending):
            self._send(topic)
        while self.in_flight:
            self._collect(*self.in_flight.popleft())
        return TxnCommitMessage(handles=self.handles)


async def send_fresh(
    producer: TransactionProducer, msgs: list[Message], batch_props: dict[str, str] | None
) -> TransactionHandle:
    """``msgs`` as one half (``batch_props`` None: one message) or one batch half, tried up
    to ``SEND_TRIES`` times, each try under fresh msg ids (UNIQ_KEY).

    A try whose answer is lost (a timeout, a reset link) may have been stored. A client's own
    resend keeps the UNIQ_KEY (RocketMQ's at-least-once), so the broker would hold two halves
    with one id, and the check-back, which sees only the id, could not tell the copy the task
    got a handle for from the other: it would commit both. The check names a *renewed* copy
    (TransactionalMessageServiceImpl.check: putBackHalfMsgQueue, then resolveHalfMsg with the
    copy's commitLogOffset and queue offset), and RocketMQ's broker marks no copy with the
    original's offset (TransactionalMessageBridge.renewHalfMessageInner), so the ledger
    cannot name the stored copy either. Fresh ids per try make every stored copy of a row
    distinct: the ledger lists the ids of the handles returned, and a copy whose answer was
    lost has an id no ledger entry lists, so its check-back is answered ROLLBACK."""
    tx = producer.tx
    for attempt in range(SEND_TRIES):
        for msg in msgs:
            msg.clear_property(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        try:
            if batch_props is None:
                return await tx.send_half_message(msgs[0])
            return await tx.send_half_batch(msgs, properties=batch_props)
        except (RemotingError, OSError, BrokerResponseError) as exc:
            final = attempt == SEND_TRIES - 1
            if final or (isinstance(exc, BrokerResponseError) and not exc.retriable):
                raise  # MESSAGE_ILLEGAL included: a batch refused goes one half per row
            log.info("a half of %d rows failed (%r): sending it again, new ids", len(msgs), exc)
    raise AssertionError("unreachable")  # pragma: no cover


def send_halves(batches: Iterator[Any], write: TxnWrite, batch_id: int) -> TxnCommitMessage:
    """A task: its rows as halves (batched where the brokers take it); the handles once every
    send succeeded."""
    sender = _HalfSender(write, batch_id)
    for batch in batches:
        for msg, sharding_key in batch_to_messages(batch, write.options):
            if sharding_key is not None or msg.delay_time_level > 0:
                raise ClientError("exactly_once takes neither shardingKey nor delayLevel rows")
            sender.add(msg)
    return sender.finish()


def handles_of(messages: list[WriterCommitMessage | None]) -> list[TransactionHandle]:
    return [h for m in messages if isinstance(m, TxnCommitMessage) for h in m.handles]


def end_all(
    write: TxnWrite, handles: list[TransactionHandle], state: LocalTransactionState
) -> None:
    """End every handle, ``ENDS_IN_FLIGHT`` at a time (``BATCHES_IN_FLIGHT`` batch halves,
    each a batch put on the broker); a failed end is retried after a pause, and one that
    still fails is left to the ledger-backed check-back."""
    producer = write.producer()
    pending = list(handles)
    window = BATCHES_IN_FLIGHT if any(h.batch_count for h in pending) else ENDS_IN_FLIGHT
    for attempt in range(END_ATTEMPTS):
        if attempt:
            time.sleep(END_RETRY_PAUSE_S * attempt)  # an end still running answers SYSTEM_BUSY
        failed: list[TransactionHandle] = []
        for start in range(0, len(pending), window):
            chunk = pending[start : start + window]
            futures = [
                producer.loop.submit(producer.tx.end_transaction(None, h, state)) for h in chunk
            ]
            for handle, future in zip(chunk, futures, strict=True):
                try:
                    future.result()
                except (RocketQError, OSError) as exc:
                    failed.append(handle)
                    if attempt == END_ATTEMPTS - 1:
                        log.warning(
                            "ending %s as %s failed (%r); a check-back will", handle, state, exc
                        )
        if not failed:
            return
        pending = failed


def commit_batch(
    write: TxnWrite, messages: list[WriterCommitMessage | None], batch_id: int
) -> None:
    handles = handles_of(messages)
    decided = write.ledger.decided(batch_id)
    if decided is None:
        write.ledger.record(batch_id, [h.msg_id for h in handles])
        end_all(write, handles, LocalTransactionState.COMMIT)
        return
    log.info("batch %d was decided before (a replay): rolling back its new halves", batch_id)
    end_all(write, [h for h in handles if h.msg_id not in decided], LocalTransactionState.ROLLBACK)


def abort_batch(write: TxnWrite, messages: list[WriterCommitMessage | None], batch_id: int) -> None:
    if write.ledger.decided(batch_id) is None:
        end_all(write, handles_of(messages), LocalTransactionState.ROLLBACK)


def txn_write(options: WriteOptions, write_id: str) -> TxnWrite:
    if options.checkpoint_location is None:
        raise SparkOptionError(
            "deliveryGuarantee=exactly_once needs the checkpointLocation option: the sink keeps"
            " its transaction ledger there, where the driver and executors can read it"
        )
    root = Path(options.checkpoint_location) / "rocketq-sink" / write_id
    return TxnWrite(options, write_id, TxnLedger(str(root)))


class TopicTxnBatchWriter(DataSourceArrowWriter):
    def __init__(self, options: WriteOptions, schema: StructType, overwrite: bool) -> None:
        if overwrite:
            raise SparkOptionError("a topic is append-only: use mode('append'), not overwrite")
        check_input_schema(schema, options)
        self.write_state = txn_write(options, f"job-{uuid.uuid4().hex}")

    def write(self, iterator: Iterator[Any]) -> TxnCommitMessage:
        return send_halves(iterator, self.write_state, 0)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        commit_batch(self.write_state, messages, 0)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        abort_batch(self.write_state, messages, 0)


class TopicTxnStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: WriteOptions, schema: StructType, overwrite: bool) -> None:
        check_input_schema(schema, options)
        self.write_state = txn_write(options, "stream")

    def write(self, iterator: Iterator[Any]) -> TxnCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        batch_id = int(context.getLocalProperty("streaming.sql.batchId") or -1) if context else -1
        return send_halves(iterator, self.write_state, batch_id)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        commit_batch(self.write_state, messages, batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        abort_batch(self.write_state, messages, batchId)
