"""Stub of the C module ``rocketq._native._remoting`` (``_remoting.c`` and ``header.c``)."""

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from _typeshed import ReadableBuffer

def configure(
    command_cls: type[Any], languages: list[Any], other: Any, json: Any, rocketmq: Any, /
) -> None: ...
def split_frames(
    buffer: ReadableBuffer, max_frame_size: int, /
) -> tuple[list[Any], int, str | None]: ...
def split_sends(
    buffer: ReadableBuffer,
    max_frame_size: int,
    spec: tuple[int, tuple[tuple[bytes, ...], bytes, bytes, bytes, int], type[Any], bytes, bytes],
    /,
) -> tuple[list[Any], int, str | None]: ...
def take_sends(
    items: list[Any],
    channel: object,
    room: int,
    taker: tuple[dict[str, Any], dict[str, Any], Any, type[Any], Any, Any, int],
    /,
) -> int: ...
def split_take(
    buffer: ReadableBuffer,
    max_frame_size: int,
    spec: tuple[int, tuple[tuple[bytes, ...], bytes, bytes, bytes, int], type[Any], bytes, bytes],
    channel: object,
    room: int,
    taker: tuple[dict[str, Any], dict[str, Any], Any, type[Any], Any, Any, int],
    config: object,
    /,
) -> int | tuple[list[Any], int, str | None, int] | None: ...
def count_figures(
    counts: list[int],
    bounds: tuple[float, ...] | tuple[int, ...],
    values: list[float] | list[int],
    scale: float,
    mode: int,
    start: float,
    /,
) -> Any: ...
def send_reply_heads(
    pieces: tuple[bytes, ...],
    items: list[tuple[int, str, int, int]] | list[tuple[int, int, int, int]],
    prefix: bytes = ...,
    /,
) -> bytes | None: ...
def send_reply_runs(
    pieces: tuple[bytes, ...],
    items: list[tuple[int, int, int, int]],
    prefix: bytes,
    ends: list[int],
    /,
) -> list[bytes] | None: ...
def send_answer_flush(
    pieces: tuple[bytes, ...],
    prefix: bytes,
    deferreds: list[Any],
    puts: list[Any],
    values: list[int],
    indexes: Sequence[int],
    skip_topics: AbstractSet[str],
    json: object,
    now: float,
    /,
) -> (
    tuple[
        list[int],
        list[Any],
        list[bytes],
        list[int],
        list[Any],
        list[float],
        dict[str, list[int]],
    ]
    | None
): ...
def ext_fields_of(header: bytes, /) -> dict[str, str] | None: ...
def send_put_of(
    fields: dict[str, str],
    body: bytes | bytearray | memoryview,
    rules: tuple[tuple[bytes, ...], bytes, bytes, bytes, int],
    put_cls: type[Any],
    born_host: bytes,
    store_host: bytes,
    /,
) -> Any | None: ...
