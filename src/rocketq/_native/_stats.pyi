"""Stub of the C module ``rocketq._native._stats`` (``stats.c``)."""

from typing import Any

def count_puts(
    manager: object,
    tables: tuple[Any, ...],
    by_topic: dict[str, list[int]],
    message_type: str,
    /,
) -> list[str]: ...
def count_flush(
    manager: object,
    tables: tuple[Any, ...],
    by_topic: dict[str, list[int]],
    message_type: str,
    elapsed_s: list[float],
    /,
) -> list[str] | None: ...
