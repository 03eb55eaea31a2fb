"""Stub of the C module ``rocketq._native._record`` (``_record.c`` and its parts beside it)."""

from collections.abc import Callable, Sequence
from typing import Any

from _typeshed import ReadableBuffer, WriteableBuffer

ST_END: int
ST_BLANK: int
ST_BAD: int
ST_INCOMPLETE: int
GM_NO_MATCHED_MESSAGE: int
GM_FOUND: int
GM_MESSAGE_WAS_REMOVING: int
GM_OFFSET_FOUND_NULL: int
CRC32_IMPL: str  # "pclmul" (x86-64 carry-less multiply), "libz" (CPython's libz.so.1) or "table"

def crc32(data: ReadableBuffer, /) -> int: ...
def crc32_table(data: ReadableBuffer, /) -> int: ...
def crc32_libz(data: ReadableBuffer, /) -> int: ...
def encode_record(
    topic: str,
    body: ReadableBuffer | None,
    properties: dict[str, str] | ReadableBuffer | None,
    born: bytes,
    store: bytes,
    sys_flag: int,
    queue_id: int,
    flag: int,
    queue_offset: int,
    commitlog_offset: int,
    born_timestamp: int,
    store_timestamp: int,
    reconsume_times: int,
    prepared_transaction_offset: int,
    /,
) -> bytearray: ...
def encode_message_ext(msg: Any, host_to_bytes: Callable[[Any], bytes], /) -> bytearray: ...
def write_record(
    dest: WriteableBuffer,
    pos: int,
    record: ReadableBuffer,
    queue_offset: int,
    commitlog_offset: int,
    store_timestamp_position: int,
    store_timestamp: int,
    /,
) -> None: ...
def batch_puts(
    body: ReadableBuffer,
    head: tuple[str, int, int, int, bytes, bytes, int, bool],
    rules: tuple[tuple[bytes, ...], bytes, bytes, int],
    put_cls: type[Any],
    /,
) -> list[Any] | None: ...
def append_sends(
    dest: WriteableBuffer,
    pos: int,
    file_size: int,
    file_from_offset: int,
    puts: list[Any],
    start: int,
    table: dict[str, int],
    store_timestamp: int,
    max_record_size: int,
    out: WriteableBuffer,
    /,
) -> tuple[int, int]: ...
def scan_records(
    buf: ReadableBuffer,
    pos: int,
    limit: int,
    file_size: int,
    file_from_offset: int,
    max_pos: int,
    check_crc: bool,
    tail_check: bool,
    factory: Callable[..., Any] | None,
    read_properties: bool,
    schedule_tags_code: Callable[[str, dict[str, str], int], int] | None,
    /,
) -> tuple[list[Any], int, int]: ...
def record_starts(buf: ReadableBuffer, /) -> tuple[bytes, int]: ...
def pull_columns(buf: ReadableBuffer, /) -> tuple[int, int, tuple[bytes, ...]]: ...
def decode_records(
    buf: ReadableBuffer,
    pos: int,
    check_crc: bool,
    read_body: bool,
    decompress: bool,
    message_cls: Callable[..., Any],
    host_of: Callable[[bytes], tuple[str, int]],
    min_offset_text: str = ...,
    max_offset_text: str = ...,
    /,
) -> tuple[list[Any], int, bool]: ...
def collect_messages(
    cq_files: tuple[Any, ...] | list[Any],
    cq_file_size: int,
    min_logic_offset: int,
    cl_files: tuple[Any, ...] | list[Any],
    cl_file_size: int,
    min_phy_offset: int,
    offset: int,
    max_offset: int,
    scan_limit: int,
    max_msgs: int,
    max_bytes: int,
    codes: tuple[int, ...] | None,
    resident_only: bool,
    /,
) -> tuple[int, int, bytes, int, int] | None: ...
def pull_reply_head(
    pieces: tuple[bytes, ...], values: tuple[int, ...], body_length: int, /
) -> bytes | None: ...
def dispatch_runs(requests: list[Any], /) -> dict[tuple[str, int], list[Any]]: ...
def cq_units(
    view: WriteableBuffer, pos: int, limit: int, requests: list[Any], start: int, /
) -> tuple[int, int]: ...
def index_puts(
    index_file: Any, view: WriteableBuffer | None, requests: list[Any], start: int, done: int, /
) -> tuple[int, int]: ...
def dispatch_direct(
    view: ReadableBuffer,
    pos: int,
    limit: int,
    file_from_offset: int,
    queues: dict[str, dict[int, Any]],
    index_file: Any,
    index_view: WriteableBuffer | None,
    stop_topics: tuple[str, ...],
    /,
) -> tuple[int, int, int]: ...
def populate(buffer: ReadableBuffer, offset: int, length: int, write: bool, /) -> bool: ...
def sync_files(fds: Sequence[int], last_fd: int, last_data: ReadableBuffer, /) -> None: ...
def batch_msg_ids(prefix: str, slots: ReadableBuffer, /) -> str | None: ...
