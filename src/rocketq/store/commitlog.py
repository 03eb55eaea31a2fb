"""CommitLog: the append-only message log (store.md §2).

Record prefix (IPv4 hosts; an IPv6 host widens its field from 8 to 20 bytes)::

    0 TOTALSIZE i4 | 4 MAGIC i4 | 8 BODYCRC i4 | 12 QUEUEID i4 | 16 FLAG i4
    20 QUEUEOFFSET i8 | 28 PHYSICALOFFSET i8 | 36 SYSFLAG i4 | 40 BORNTIMESTAMP i8
    48 BORNHOST 8|20 | STORETIMESTAMP i8 | STOREHOST 8|20 | RECONSUMETIMES i4
    PREPARED_TX_OFFSET i8 | BODYLENGTH i4 | BODY B | TOPICLEN 1|2 | TOPIC T | PROPLEN i2 | PROPS P
    = 91 + B + T + P  (+1 for v2 magic, +12 per IPv6 host)

Theory of operation: a record is encoded outside the put lock (``encode_message``); under
the lock the writer assigns the queue offset from ``topic_queue_table``, back-patches
QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP into the encoded bytes and copies them into
the mapped file. A record that does not fit with 8 spare bytes ends the file with a blank
record (TOTALSIZE = bytes left, MAGIC = BLANK) and goes to the next file. Durability is the
flush service's job (``flush.py``); this module only appends and reads.
"""

from __future__ import annotations

import logging
import struct
import threading
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from rocketq.common.hashing import java_string_hash
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_decoder import (
    BLANK_MAGIC_CODE,
    HEAD_STRUCT,
    MESSAGE_MAGIC_CODE,
    MESSAGE_MAGIC_CODE_V2,
    QUEUE_OFFSET_POSITION,
    STORE_TIMESTAMP_STRUCT,
    SYSFLAG_POSITION,
    TAIL_STRUCT,
)
from rocketq.common.properties import decode_properties as parse_properties
from rocketq.store.config import StoreConfig
from rocketq.store.mapped_file import MappedFile
from rocketq.store.mapped_file_queue import MappedFileQueue
from rocketq.store.results import AppendMessageResult, AppendMessageStatus

log = logging.getLogger(__name__)

END_FILE_MIN_BLANK_LENGTH = 8
BORNHOST_V6_FLAG = MessageSysFlag.BORNHOST_V6_FLAG
TRANSACTION_TYPE_MASK = MessageSysFlag.TRANSACTION_TYPE_MASK
TRANSACTION_PREPARED_TYPE = MessageSysFlag.TRANSACTION_PREPARED_TYPE
TRANSACTION_ROLLBACK_TYPE = MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"

OFFSETS_STRUCT = struct.Struct(
    ">q"  # QUEUEOFFSET
    "q"  # PHYSICALOFFSET
)
assert OFFSETS_STRUCT.size == 16
BLANK_STRUCT = struct.Struct(
    ">i"  # TOTALSIZE: bytes left in the file
    "I"  # MAGIC: BLANK_MAGIC_CODE
)
assert BLANK_STRUCT.size == END_FILE_MIN_BLANK_LENGTH
_INT64 = struct.Struct(">q")
_SYSFLAG = struct.Struct(">i")
_INT16 = struct.Struct(">h")
_INT8 = struct.Struct(">b")


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
    """Validate the record at ``pos`` (store.md §2.6); None if bad, msg_size 0 for a blank."""
    if limit - pos <= 4:
        return None
    if limit - pos < 8:
        return None
    total, magic = BLANK_STRUCT.unpack_from(view, pos)
    if magic == BLANK_MAGIC_CODE:
        return _BLANK if 8 <= total <= limit - pos else None
    if magic != MESSAGE_MAGIC_CODE and magic != MESSAGE_MAGIC_CODE_V2:
        return None
    if total < 91 or total > limit - pos:
        return None
    _t, _m, body_crc, queue_id, _flag, queue_offset, phy, sys_flag, _born = HEAD_STRUCT.unpack_from(
        view, pos
    )
    p = pos + 48 + (20 if sys_flag & 0x10 else 8)
    (store_ts,) = STORE_TIMESTAMP_STRUCT.unpack_from(view, p)
    p += 8 + (20 if sys_flag & 0x20 else 8)
    _reconsume, prepared, body_len = TAIL_STRUCT.unpack_from(view, p)
    p += 16
    if body_len < 0 or p + body_len > pos + total:
        return None
    if check_crc and (zlib.crc32(view[p : p + body_len]) & 0x7FFFFFFF) != body_crc:
        return None
    p += body_len
    if magic == MESSAGE_MAGIC_CODE:
        (topic_len,) = _INT8.unpack_from(view, p)
        p += 1
    else:
        (topic_len,) = _INT16.unpack_from(view, p)
        p += 2
    if topic_len < 0 or p + topic_len + 2 > pos + total:
        return None
    topic_bytes = view[p : p + topic_len]
    p += topic_len
    (props_len,) = _INT16.unpack_from(view, p)
    p += 2
    if props_len < 0 or p + props_len != pos + total:
        return None
    if phy != file_from_offset + pos:
        return None
    try:
        topic = bytes(topic_bytes).decode()
        props = parse_properties(bytes(view[p : p + props_len])) if read_properties else {}
    except UnicodeDecodeError:
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
        props.get("KEYS", ""),
        props.get("UNIQ_KEY"),
        sys_flag,
        prepared,
        props,
        body_crc,
    )


_BLANK = DispatchRequest("", 0, 0, 0, 0, 0, 0, "", None, 0, 0, {})


def _tags_code(topic: str, props: dict[str, str], store_ts: int, delay: dict[int, int]) -> int:
    """Hash of TAGS; for a SCHEDULE_TOPIC_XXXX record with DELAY > 0 the delivery time."""
    if topic == SCHEDULE_TOPIC and "DELAY" in props:
        try:
            level = min(int(props["DELAY"]), max(delay) if delay else 1)
        except ValueError:
            level = 0
        if level > 0:
            return store_ts + delay.get(level, 1000)
    tags = props.get("TAGS")
    return java_string_hash(tags) if tags else 0


class EncodedMessage:
    """A record encoded outside the lock, with what the lock holder needs to patch it."""

    __slots__ = ("key", "record", "store_ts_pos", "tran_type")

    def __init__(self, record: bytearray, topic: str, queue_id: int) -> None:
        self.record = record
        self.key = f"{topic}-{queue_id}"
        (sys_flag,) = _SYSFLAG.unpack_from(record, SYSFLAG_POSITION)
        self.store_ts_pos = 68 if sys_flag & BORNHOST_V6_FLAG else 56
        self.tran_type = sys_flag & TRANSACTION_TYPE_MASK


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
        self._msg_id_prefix = _msg_id_prefix(config.store_host)
        self._delay_table = config.delay_level_table_ms()

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

    def _append_locked(self, encoded: EncodedMessage, now: int) -> AppendMessageResult:
        record = encoded.record
        size = len(record)
        mf = self.mapped_file_queue.get_last_mapped_file_or_create(0)
        if size + END_FILE_MIN_BLANK_LENGTH > mf.remaining():
            self._write_blank(mf)
            mf = self.mapped_file_queue.get_last_mapped_file_or_create(0)
        table = self.topic_queue_table
        key = encoded.key
        queue_offset = table.get(key, 0)
        skip_cq = encoded.tran_type in (TRANSACTION_PREPARED_TYPE, TRANSACTION_ROLLBACK_TYPE)
        pos = mf.wrote_position
        phy = mf.file_from_offset + pos
        OFFSETS_STRUCT.pack_into(record, QUEUE_OFFSET_POSITION, 0 if skip_cq else queue_offset, phy)
        _INT64.pack_into(record, encoded.store_ts_pos, now)
        mf.view[pos : pos + size] = record
        mf.wrote_position = pos + size
        self.store_timestamp = now
        if not skip_cq:
            table[key] = queue_offset + 1
        return AppendMessageResult(
            AppendMessageStatus.PUT_OK,
            wrote_offset=phy,
            wrote_bytes=size,
            msg_id=self._msg_id(phy),
            queue_offset=0 if skip_cq else queue_offset,
            store_timestamp=now,
        )

    def _write_blank(self, mf: MappedFile) -> None:
        pos = mf.wrote_position
        left = mf.file_size - pos
        BLANK_STRUCT.pack_into(mf.view, pos, left, BLANK_MAGIC_CODE)
        mf.wrote_position = mf.file_size

    def _msg_id(self, offset: int) -> str:
        return f"{self._msg_id_prefix}{offset:016X}"

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
            except OSError as exc:
                log.error("slave cannot create a commitlog file at %d: %s", start_offset, exc)
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
        if data is None or len(data) < 64:
            return -1
        (sys_flag,) = _SYSFLAG.unpack_from(data, SYSFLAG_POSITION)
        (ts,) = _INT64.unpack_from(data, 68 if sys_flag & BORNHOST_V6_FLAG else 56)
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

        Returns (requests, next_offset, bad): ``bad`` is True when a record failed the checks
        of store.md §2.6 at ``next_offset``; a blank record moves to the next file.
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
            while pos < wrote and offset < end_limit:
                if _incomplete_tail(view, pos, wrote, mf.file_size):
                    return requests, offset, False  # a slave has part of this record yet
                req = check_message_and_return_size(
                    view,
                    pos,
                    wrote,
                    mf.file_from_offset,
                    check_crc=check_crc,
                    delay_table=self._delay_table,
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
    import ipaddress

    packed = ipaddress.ip_address(host[0]).packed
    return (packed + struct.pack(">i", host[1])).hex().upper()
