"""The one switch between the compiled record paths and the pure-Python ones (issue 13).

``RECORD`` is the C module ``rocketq._native._record`` (built by ``setup.py``) or None: None
when the extension is missing (a tree used without ``pip install``) or when the environment
says ``ROCKETQ_NATIVE=0``. The record codec (``message_decoder``), the commitlog scan
(``commitlog``) and recovery (``recovery``) read ``native_record.RECORD`` on every call, so
:func:`use` (the tests run both paths) switches all of them at once. The pure-Python code is
the reference: the C functions hand any record they cannot handle back to it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)

ENV_SWITCH = "ROCKETQ_NATIVE"


class RecordPaths(Protocol):
    """What the callers use of ``rocketq._native._record`` (its stub has the details)."""

    ST_END: int
    ST_BLANK: int
    ST_BAD: int
    ST_INCOMPLETE: int

    def encode_record(self, *args: Any) -> bytearray: ...
    def encode_message_ext(
        self, msg: Any, host_to_bytes: Callable[[Any], bytes], /
    ) -> bytearray: ...
    def write_record(self, *args: Any) -> None: ...
    def append_sends(self, *args: Any) -> tuple[int, int]: ...
    def batch_puts(self, *args: Any) -> list[Any] | None: ...
    def batch_msg_ids(self, prefix: str, slots: Any, /) -> str | None: ...
    def scan_records(self, *args: Any) -> tuple[list[Any], int, int]: ...
    def record_starts(self, buf: Any, /) -> tuple[bytes, int]: ...
    def pull_columns(self, buf: Any, /) -> tuple[int, int, tuple[bytes, ...]]: ...
    def decode_records(
        self, buf: Any, pos: int, check_crc: bool, read_body: bool, decompress: bool,
        message_cls: Callable[..., Any], host_of: Callable[[bytes], tuple[str, int]],
        min_offset_text: str = ..., max_offset_text: str = ..., /,
    ) -> tuple[list[Any], int, bool]: ...  # fmt: skip
    def collect_messages(self, *args: Any) -> tuple[int, int, bytes, int, int] | None: ...
    def pull_reply_head(
        self, pieces: tuple[bytes, ...], values: tuple[int, ...], body_length: int, /
    ) -> bytes | None: ...
    def dispatch_runs(self, requests: list[Any], /) -> dict[tuple[str, int], list[Any]]: ...
    def cq_units(self, *args: Any) -> tuple[int, int]: ...
    def index_puts(self, *args: Any) -> tuple[int, int]: ...
    def dispatch_direct(self, *args: Any) -> tuple[int, int, int]: ...
    def populate(self, buffer: Any, offset: int, length: int, write: bool, /) -> bool: ...
    def sync_files(self, fds: list[int], last_fd: int, last_data: bytes, /) -> None: ...


COMPILED: RecordPaths | None
try:
    from rocketq._native import _record as _compiled
except ImportError as exc:  # pragma: no cover - a source tree without the built extension
    log.debug("rocketq._native._record not built (%s): pure-Python record paths", exc)
    COMPILED = None
else:
    COMPILED = _compiled

RECORD: RecordPaths | None = COMPILED if os.environ.get(ENV_SWITCH, "1") != "0" else None


def use(native: bool) -> bool:
    """Select the C paths (when built) or the pure-Python ones; True when C is now in use."""
    global RECORD
    RECORD = COMPILED if native else None
    return RECORD is not None


def active() -> str:
    """``"c"`` or ``"python"``: which record paths run now (logged by the broker at start)."""
    return "c" if RECORD is not None else "python"
