"""Stub of the C module ``rocketq._native._pop`` (``pop.c``)."""

from typing import Any

from _typeshed import ReadableBuffer

def batch_ack_body(body: ReadableBuffer, cls: type[Any], /) -> tuple[str, list[Any]] | None: ...
def pop_answer_fields(
    pop_time: int,
    invisible_time: int,
    revive_qid: int,
    rest_num: int,
    entries: list[tuple[str, int, int, list[int]]],
    order_count_info: str | None,
    /,
) -> dict[str, str] | None: ...
