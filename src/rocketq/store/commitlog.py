"""CommitLog: the append-only message log (RocketMQ's CommitLog.java; the record layout is
``rocketq.common.record_layout``'s).

Theory of operation: a record is encoded outside the put lock (``encode_message``); under
the lock the writer assigns the queue offset from ``topic_queue_table``, back-patches
QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP into the encoded bytes and copies them into
the mapped file. A record that does not fit with 8 spare bytes ends the file with a blank
record (TOTALSIZE = bytes left, MAGIC = BLANK) and goes to the next file. Durability is the
flush service's job (``flush.py``); this module only appends and reads. The copy-and-patch
of an append and the walk of ``read_dispatch_requests`` run in C when ``native_record``
selects it; ``check_message_and_return_size`` is the pure-Python reference of that walk. A
``SendPut`` (the broker's pass-through single send) is encoded by C straight into the mapped
file, a run of them in one call per file (``commitlog_send``); with C off the writer encodes
it as any other message (``message_writer``), the reference.
"""

from __future__ import annotations

import logging
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from rocketq.common import message_const as mc
from rocketq.common import native_record
from rocketq.common.hashing import java_string_hash
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import body_crc as message_body_crc
from rocketq.common.message_id import host_to_bytes
from rocketq.common.properties import decode_properties as parse_properties
from rocketq.common.record_layout import (
    BLANK_MAGIC_CODE,
    BLANK_SIZE,
    BLANK_STRUCT,
    FIXED_V4_SIZE,
    FIXED_V4_STRUCT,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    MIN_RECORD_SIZE,
    QUEUE_OFFSET_POSITION,
    STORE_TIMESTAMP_STRUCT,
    SYSFLAG_POSITION,
    fixed_size,
    locate_topic_and_properties,
    store_timestamp_position,
    unpack_fixed,
)
from rocketq.common.topic import SCHEDULE_TOPIC
from rocketq.errors import DecodeError
from rocketq.store.commitlog_send import (
    AppendOutcome,
    SendPut,
    append_batch_sends,
    append_send_values,
    append_sends,
)
from rocketq.store.config import StoreConfig
from rocketq.store.mapped_file import MappedFile, MappedFileCreateError
from rocketq.store.mapped_file_queue import MappedFileQueue
from rocketq.store.results import AppendMessageResult, AppendMessageStatus, PutMessageStatus

log = logging.getLogger(__name__)

END_FILE_MIN_BLANK_LENGTH = BLANK_SIZE

OFFSETS_STRUCT = struct.Struct(
    ">q"  # QUEUEOFFSET
    "q"  # PHYSICALOFFSET
)
assert OFFSETS_STRUCT.size == 16
_SYSFLAG = struct.Struct(">i")
_V6_FLAGS = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG


@dataclass(slots=True)
class DispatchRequest:
    """One committed record as the dispatchers (consume queue, index) need it."""

    topic: str
    queue_id: int
    commit_log_offset: int
    msg_size: int
    tags_code: int
    store_timestamp: int
    consume_queue_offset: int
    keys: str
    uniq_key: str | None
    sys_flag: int
    prepared_transaction_offset: int
    properties: dict[str, str]
    body_crc: int = 0


def check_message_and_return_size(
    view: memoryview,
    pos: int,
    limit: int,
    file_from_offset: int,
    *,
    check_crc: bool,
    delay_table: dict[int, int],
    read_properties: bool = True,
) -> DispatchRequest | None:
    """The record at ``pos`` as checkMessageAndReturnSize: None if bad, msg_size 0 for a blank."""
    if limit - pos < BLANK_SIZE:
        return None
    total, magic = BLANK_STRUCT.unpack_from(view, pos)
    if magic == BLANK_MAGIC_CODE:
        return _BLANK if BLANK_SIZE <= total <= limit - pos else None
    if magic != MESSAGE_MAGIC_CODE and magic != MESSAGE_MAGIC_CODE_V2:
        return None
    if total < MIN_RECORD_SIZE or total > limit - pos:
        return None
    # one unpack for the usual two IPv4 hosts; its head fields are right for any record
    fixed = FIXED_V4_STRUCT.unpack_from(view, pos)
    sys_flag = fixed[7]
    p = pos + FIXED_V4_SIZE
    if sys_flag & _V6_FLAGS:
        if total < fixed_size(sys_flag) + MIN_RECORD_SIZE - FIXED_V4_SIZE:
            return None
        fixed, p = unpack_fixed(view, pos, sys_flag)
    (_t, _m, body_crc, queue_id, _f, queue_offset, phy, _s, _born_ts, _born, store_ts, _store, _r,
     prepared, body_len) = fixed  # fmt: skip
    end = pos + total
    if body_len < 0 or p + body_len > end or phy != file_from_offset + pos:
        return None
    if check_crc and message_body_crc(view[p : p + body_len]) != body_crc:
        return None
    try:
        topic_pos, topic_len, props_pos, _props_len = locate_topic_and_properties(
            view, pos, p + body_len, magic, end
        )
        topic = bytes(view[topic_pos : topic_pos + topic_len]).decode()
        props = parse_properties(bytes(view[props_pos:end])) if read_properties else {}
    except (DecodeError, UnicodeDecodeError):
        return None
    tags_code = _tags_code(topic, props, store_ts, delay_table)
    return DispatchRequest(
        topic,
        queue_id,
        phy,
        total,
        tags_code,
        store_ts,
        queue_offset,
        props.get(mc.PROPERTY_KEYS, ""),
        props.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
        sys_flag,
        prepared,
        props,
        body_crc,
    )


_BLANK = DispatchRequest("", 0, 0, 0, 0, 0, 0, "", None, 0, 0, {})


def _tags_code(topic: str, props: dict[str, str], store_ts: int, delay: dict[int, int]) -> int:
    """Hash of TAGS; for a SCHEDULE_TOPIC_XXXX record with DELAY > 0 the delivery time."""
    if topic == SCHEDULE_TOPIC and mc.PROPERTY_DELAY_TIME_LEVEL in props:
        try:
            level = min(int(props[mc.PROPERTY_DELAY_TIME_LEVEL]), max(delay) if delay else 1)
        except ValueError:
            level = 0
        if level > 0:
            return store_ts + delay.get(level, 1000)
    tags = props.get(mc.PROPERTY_TAGS)
    return java_string_hash(tags) if tags else 0


class EncodedMessage:
    """A record encoded outside the lock, with what the lock holder needs to patch it."""

    __slots__ = ("has_cq_unit", "key", "record", "store_ts_pos")

    def __init__(self, record: bytearray, topic: str, queue_id: int) -> None:
        self.record = record
        self.key = f"{topic}-{queue_id}"
        (sys_flag,) = _SYSFLAG.unpack_from(record, SYSFLAG_POSITION)
        facts = _SYSFLAG_FACTS.get(sys_flag)
        if facts is None:
            facts = (
                store_timestamp_position(sys_flag),
                MessageSysFlag.has_consume_queue_unit(sys_flag),
            )
            if len(_SYSFLAG_FACTS) < _SYSFLAG_FACTS_MAX:  # flags come from clients: bounded
                _SYSFLAG_FACTS[sys_flag] = facts
        self.store_ts_pos, self.has_cq_unit = facts


#: SYSFLAG -> (STORETIMESTAMP position, has a consume queue unit): a put's two questions about
#: its flags, answered once per flag value (a handful of values in use)
_SYSFLAG_FACTS: dict[int, tuple[int, bool]] = {}
_SYSFLAG_FACTS_MAX = 256


class CommitLog:
    def __init__(self, config: StoreConfig, *, free_space_check: object = None) -> None:
        self.config = config
        self.mapped_file_size = config.mapped_file_size_commit_log
        self.mapped_file_queue = MappedFileQueue(
            config.commit_log_dir,
            self.mapped_file_size,
            free_space_check=free_space_check,  # type: ignore[arg-type]
        )
        self.topic_queue_table: dict[str, int] = {}
        self.put_lock = threading.Lock()
        self.clock_ms = config.clock_ms
        self.store_timestamp = 0  # of the last appended record
        self.msg_id_prefix = _msg_id_prefix(config.store_host)
        self.delay_table = config.delay_level_table_ms()

    def load(self) -> bool:
        return self.mapped_file_queue.load()

    # ------------------------------------------------------------------ append

    def append(self, encoded: EncodedMessage) -> AppendMessageResult:
        """Append one encoded record (raises MappedFileCreateError when no file can be made)."""
        with self.put_lock:
            return self._append_locked(encoded, self.clock_ms())

    def append_batch(self, batch: Sequence[EncodedMessage]) -> AppendMessageResult:
        """Append records in one lock hold: consecutive queue offsets, one result for all."""
        with self.put_lock:
            now = self.clock_ms()
            first = self._append_locked(batch[0], now)
            last = first
            ids = [first.msg_id]
            for encoded in batch[1:]:
                last = self._append_locked(encoded, now)
                ids.append(last.msg_id)
        return AppendMessageResult(
            AppendMessageStatus.PUT_OK,
            wrote_offset=first.wrote_offset,
            wrote_bytes=last.wrote_offset + last.wrote_bytes - first.wrote_offset,
            msg_id=",".join(ids),
            queue_offset=first.queue_offset,
            store_timestamp=now,
            msg_num=len(batch),
        )

    def append_batch_sends(self, puts: list[SendPut]) -> AppendMessageResult | PutMessageStatus:
        """A batch send's SendPuts (C's ``batch_puts``) written by C in one lock hold, one
        result for all as ``append_batch`` gives (``commitlog_send.append_batch_sends``)."""
        with self.put_lock:
            return append_batch_sends(self, puts, self.clock_ms())

    def append_send_values(self, puts: list[SendPut]) -> tuple[list[int], int]:
        """SendPuts only, written by C in one lock hold: their four ints each
        (``commitlog_send.append_send_values``) and the store timestamp they got."""
        with self.put_lock:
            now = self.clock_ms()
            return append_send_values(self, puts, now), now

    def append_each(self, batch: Sequence[EncodedMessage | SendPut]) -> list[AppendOutcome]:
        """Append the records of separate puts in one lock hold, a result each: None for a
        record no mapped file could be created for, the status of a SendPut C refused (its
        encode's: properties too long, illegal); the others are unaffected. The SendPuts need
        the C module (``native_record.RECORD``)."""
        out: list[AppendOutcome] = []
        n = len(batch)
        with self.put_lock:
            now = self.clock_ms()
            i = 0
            while i < n:
                encoded = batch[i]
                if isinstance(encoded, SendPut):
                    j = i + 1
                    while j < n and isinstance(batch[j], SendPut):
                        j += 1
                    out += append_sends(self, list(batch[i:j]), now)  # type: ignore[arg-type]
                    i = j
                    continue
                try:
                    out.append(self._append_locked(encoded, now))
                except MappedFileCreateError:
                    log.exception("create mapped file failed")
                    out.append(None)
                i += 1
        return out

    def _append_locked(self, encoded: EncodedMessage, now: int) -> AppendMessageResult:
        record = encoded.record
        size = len(record)
        mf = self.mapped_file_queue.get_last_mapped_file_or_create(0)
        if size + END_FILE_MIN_BLANK_LENGTH > mf.remaining():
            self.write_blank(mf)
            mf = self.mapped_file_queue.get_last_mapped_file_or_create(0)
        table = self.topic_queue_table
        key = encoded.key
        queue_offset = table.get(key, 0)
        skip_cq = not encoded.has_cq_unit
        pos = mf.wrote_position
        phy = mf.file_from_offset + pos
        compiled = native_record.RECORD
        if compiled is not None:  # copy, then patch in the mapped file: one C call
            compiled.write_record(
                mf.view, pos, record, 0 if skip_cq else queue_offset, phy, encoded.store_ts_pos, now
            )
        else:
            OFFSETS_STRUCT.pack_into(
                record, QUEUE_OFFSET_POSITION, 0 if skip_cq else queue_offset, phy
            )
            STORE_TIMESTAMP_STRUCT.pack_into(record, encoded.store_ts_pos, now)
            mf.view[pos : pos + size] = record
        mf.wrote_position = pos + size
        self.store_timestamp = now
        if not skip_cq:
            table[key] = queue_offset + 1
        # positional (status, wrote_offset, wrote_bytes, msg_id, queue_offset, store_timestamp):
        # keywords cost 0.2 us more per put
        return AppendMessageResult(
            AppendMessageStatus.PUT_OK,
            phy,
            size,
            f"{self.msg_id_prefix}{phy:016X}",
            0 if skip_cq else queue_offset,
            now,
        )

    def write_blank(self, mf: MappedFile) -> None:
        pos = mf.wrote_position
        left = mf.file_size - pos
        BLANK_STRUCT.pack_into(mf.view, pos, left, BLANK_MAGIC_CODE)
        mf.wrote_position = mf.file_size

    def _msg_id(self, offset: int) -> str:
        return f"{self.msg_id_prefix}{offset:016X}"

    # ------------------------------------------------------------------ read

    def get_message(self, offset: int, size: int) -> bytes | None:
        mf = self.mapped_file_queue.find_mapped_file_by_offset(offset, offset == 0)
        if mf is None:
            return None
        pos = offset % self.mapped_file_size
        if pos + size > mf.wrote_position:
            return None
        return mf.read(pos, size)

    def get_max_offset(self) -> int:
        return self.mapped_file_queue.get_max_offset()

    # ------------------------------------------------------------------ replication

    def select_data(self, offset: int, max_bytes: int) -> bytes | None:
        """Written bytes from ``offset`` to its file's write position (HA transfer)."""
        mf = self.mapped_file_queue.find_mapped_file_by_offset(offset)
        if mf is None:
            return None
        pos = offset - mf.file_from_offset
        size = min(mf.wrote_position - pos, max_bytes)
        return mf.read(pos, size) if size > 0 else None

    def append_data(self, start_offset: int, data: bytes) -> bool:
        """A slave appends the master's bytes at ``start_offset`` (CommitLog.appendData).

        The bytes must continue this log exactly and stay inside one file; the master's
        transfers never cross a file end (the blank END_OF_FILE record fills the rest).
        """
        with self.put_lock:
            try:
                mf = self.mapped_file_queue.get_last_mapped_file_or_create(start_offset)
            except OSError:
                log.exception("slave cannot create a commitlog file at %d", start_offset)
                return False
            pos = mf.wrote_position
            if mf.file_from_offset + pos != start_offset or len(data) > mf.file_size - pos:
                log.error(
                    "slave append at %d (%d bytes) does not continue the log at %d",
                    start_offset,
                    len(data),
                    mf.file_from_offset + pos,
                )
                return False
            mf.view[pos : pos + len(data)] = data
            mf.wrote_position = pos + len(data)
        return True

    def get_min_offset(self) -> int:
        mf = self.mapped_file_queue.get_first_mapped_file()
        return mf.file_from_offset if mf is not None else -1

    def roll_next_file(self, offset: int) -> int:
        return offset + self.mapped_file_size - offset % self.mapped_file_size

    def pickup_store_timestamp(self, offset: int, size: int) -> int:
        data = self.get_message(offset, size)
        if data is None or len(data) < MIN_RECORD_SIZE:
            return -1
        (sys_flag,) = _SYSFLAG.unpack_from(data, SYSFLAG_POSITION)
        (ts,) = STORE_TIMESTAMP_STRUCT.unpack_from(data, store_timestamp_position(sys_flag))
        return int(ts)

    def read_dispatch_requests(
        self,
        offset: int,
        *,
        check_crc: bool,
        max_bytes: int = 1 << 20,
        read_properties: bool = True,
    ) -> tuple[list[DispatchRequest], int, bool]:
        """Decode committed records from ``offset`` (at most ``max_bytes`` worth).

        Returns (requests, next_offset, bad): ``bad`` is True when a record failed
        ``check_message_and_return_size`` at ``next_offset``; a blank moves to the next file.
        """
        requests: list[DispatchRequest] = []
        end_limit = offset + max_bytes
        while offset < end_limit:
            mf = self.mapped_file_queue.find_mapped_file_by_offset(offset)
            if mf is None:
                return requests, offset, False
            pos = offset - mf.file_from_offset
            wrote = mf.wrote_position
            if pos >= wrote:
                if wrote >= mf.file_size:
                    offset = self.roll_next_file(offset)
                    continue
                return requests, offset, False
            view = mf.view
            compiled = native_record.RECORD
            if compiled is not None:
                reqs, end_pos, status = compiled.scan_records(
                    view,
                    pos,
                    wrote,
                    mf.file_size,
                    mf.file_from_offset,
                    min(wrote, pos + end_limit - offset),
                    check_crc,
                    True,
                    DispatchRequest,
                    read_properties,
                    self._schedule_tags_code,
                )
                requests.extend(reqs)
                offset += end_pos - pos
                if status == compiled.ST_BLANK:
                    offset = self.roll_next_file(offset)
                    continue
                if status == compiled.ST_END:
                    continue
                return requests, offset, status == compiled.ST_BAD
            while pos < wrote and offset < end_limit:
                if _incomplete_tail(view, pos, wrote, mf.file_size):
                    return requests, offset, False  # a slave has part of this record yet
                req = check_message_and_return_size(
                    view,
                    pos,
                    wrote,
                    mf.file_from_offset,
                    check_crc=check_crc,
                    delay_table=self.delay_table,
                    read_properties=read_properties,
                )
                if req is None:
                    return requests, offset, True
                if req.msg_size == 0:  # blank: next file
                    offset = self.roll_next_file(offset)
                    break
                requests.append(req)
                pos += req.msg_size
                offset += req.msg_size
        return requests, offset, False

    def _schedule_tags_code(self, topic: str, props: dict[str, str], store_ts: int) -> int:
        """The tags code of a SCHEDULE_TOPIC_XXXX record (the C scan asks for these)."""
        return _tags_code(topic, props, store_ts, self.delay_table)

    # ------------------------------------------------------------------ lifecycle

    def shutdown(self) -> None:
        self.mapped_file_queue.shutdown()

    def destroy(self) -> None:
        self.mapped_file_queue.destroy()


def _incomplete_tail(view: memoryview, pos: int, wrote: int, file_size: int) -> bool:
    """True when the bytes at ``pos`` start a record that continues past ``wrote``."""
    left = wrote - pos
    if left < END_FILE_MIN_BLANK_LENGTH:
        return wrote < file_size
    total, magic = BLANK_STRUCT.unpack_from(view, pos)
    is_record = magic in (MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2)
    return bool(is_record and left < total <= file_size - pos)


def _msg_id_prefix(host: tuple[str, int]) -> str:
    """The store-host half of every offset msgId this log hands out."""
    return host_to_bytes(host).hex().upper()
