"""The POP requests' per-request codecs: a BATCH_ACK_MESSAGE's body read and a found pop's
answer fields, each in C (``rocketq._native._pop``, issue 18) with its Python reference here.

The C paths are used when ``rocketq.common.native_record``'s switch is on (``ROCKETQ_NATIVE``,
``native_record.use``: the tests run both) and the extension is built. Each C function reads
only the plain form of its input and returns None for anything else, which the reference then
handles (and words any error), so both paths give the same answer for every input
(tests/broker/pop/test_pop_codec.py, and the fuzzer's ``pop_fuzz``).
"""

from __future__ import annotations

import logging
from typing import Protocol

from rocketq.common import native_record
from rocketq.common.extra_info import build_msg_offset_info, build_start_offset_info, topic_mark
from rocketq.remoting.protocol.pop_headers import (
    BatchAck,
    PopMessageResponseHeader,
    decode_batch_ack_body,
)

log = logging.getLogger(__name__)


class PopPaths(Protocol):
    """What this module uses of ``rocketq._native._pop`` (its stub has the details)."""

    def batch_ack_body(
        self, body: bytes, cls: type[BatchAck], /
    ) -> tuple[str, list[BatchAck]] | None: ...
    def pop_answer_fields(
        self,
        pop_time: int,
        invisible_time: int,
        revive_qid: int,
        rest_num: int,
        entries: list[tuple[str, int, int, list[int]]],
        order_count_info: str | None,
        /,
    ) -> dict[str, str] | None: ...


COMPILED: PopPaths | None
try:
    from rocketq._native import _pop as _compiled
except ImportError as exc:  # pragma: no cover - a source tree without the built extension
    log.debug("rocketq._native._pop not built (%s): pure-Python pop codecs", exc)
    COMPILED = None
else:
    COMPILED = _compiled


def _native() -> PopPaths | None:
    return COMPILED if native_record.RECORD is not None else None


def read_batch_ack_body(body: bytes) -> tuple[str, list[BatchAck]]:
    """(brokerName, acks) of a BatchAckMessageRequestBody (``decode_batch_ack_body``, the
    reference: RemotingCommandError or ValueError when malformed)."""
    compiled = _native()
    if compiled is not None:
        found = compiled.batch_ack_body(body, BatchAck)
        if found is not None:
            return found
    return decode_batch_ack_body(body)


# (topic, queue id, start offset, queue offsets) of each queue a pop took messages from
PopEntry = tuple[str, int, int, list[int]]


def pop_answer_fields(
    pop_time: int,
    invisible_time: int,
    revive_qid: int,
    rest_num: int,
    entries: list[PopEntry],
    order_count_info: str | None,
) -> dict[str, str]:
    """The extFields of a found pop (PopMessageResponseHeader with startOffsetInfo and
    msgOffsetInfo; orderCountInfo for a FIFO pop, else None)."""
    compiled = _native()
    if compiled is not None:
        marked = [(topic_mark(t), q, so, offs) for t, q, so, offs in entries]
        found = compiled.pop_answer_fields(
            pop_time, invisible_time, revive_qid, rest_num, marked, order_count_info
        )
        if found is not None:
            return found
    return pop_answer_fields_reference(
        pop_time, invisible_time, revive_qid, rest_num, entries, order_count_info
    )


def pop_answer_fields_reference(
    pop_time: int,
    invisible_time: int,
    revive_qid: int,
    rest_num: int,
    entries: list[PopEntry],
    order_count_info: str | None,
) -> dict[str, str]:
    header = PopMessageResponseHeader(
        pop_time=pop_time,
        invisible_time=invisible_time,
        revive_qid=revive_qid,
        rest_num=rest_num,
        start_offset_info=build_start_offset_info([(t, q, so) for t, q, so, _ in entries]),
        msg_offset_info=build_msg_offset_info([(t, q, offs) for t, q, _, offs in entries]),
        order_count_info=order_count_info,
    )
    return header.to_ext_fields()
