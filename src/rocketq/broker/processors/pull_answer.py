"""PULL_MESSAGE's answer: the store status -> reply code table and the answer's fields
(``PullMessageProcessor``'s, as RocketMQ 4.9 answers), and the answer of a woken pull that
found its messages in memory as frame bytes (issue 22).

A held pull woken by an arrival (``PullMessageProcessor.answer_woken``) whose read is walked
in C (``MessageStore.get_message_body``) and FOUND is answered with the frame head built in one
C call (``_record.pull_reply_head``) from the numbers of the answer, without the
``RemotingCommand``, its extFields dict, ``response_to`` and the generic head encoder. The
header's text around the numbers is cut once from the Python encoder's header of a sample
answer (:func:`found_head_pieces`, ``codec.encode_json_header``: the reference), so the bytes
are the reference's; :func:`pull_reply_head` is the Python twin of the C call. Everything else
(a refusal, another status, a binary-serialized request, a slave sending the consumer back)
takes the ``RemotingCommand`` path.
"""

from __future__ import annotations

from rocketq.remoting.codec import FRAME_PREFIX_STRUCT, encode_json_header
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import PullMessageRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.store.results import GetMessageResult, GetMessageStatus

#: Store status -> reply code; None: PULL_OFFSET_MOVED unless the pull asked for offset 0.
STATUS_TO_RESPONSE: dict[GetMessageStatus, int | None] = {
    GetMessageStatus.FOUND: ResponseCode.SUCCESS,
    GetMessageStatus.NO_MATCHED_MESSAGE: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.MESSAGE_WAS_REMOVING: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.OFFSET_FOUND_NULL: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_OVERFLOW_ONE: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.NO_MESSAGE_IN_QUEUE: None,
    GetMessageStatus.NO_MATCHED_LOGIC_QUEUE: None,
    GetMessageStatus.OFFSET_TOO_SMALL: ResponseCode.PULL_OFFSET_MOVED,
    GetMessageStatus.OFFSET_OVERFLOW_BADLY: ResponseCode.PULL_OFFSET_MOVED,
}
assert set(STATUS_TO_RESPONSE) == set(GetMessageStatus)

#: the answer's numbers in the order the header has them (extFields as
#: ``pull._response_fields`` orders them, then the opaque), each a sample marker
FIELDS = ("suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset")
_MARKERS = (7_130_000_001, 7_130_000_002, 7_130_000_003, 7_130_000_004, 7_130_000_005)


def found_head_pieces(
    code: int = ResponseCode.SUCCESS, remark: str = GetMessageStatus.FOUND.name
) -> tuple[bytes, ...]:
    """The JSON header of a pull's answer (``code``, ``remark``, the four extFields, an
    opaque) cut around its five numbers: ``pull_reply_head``'s pieces."""
    sample = RemotingCommand.create_response(
        code, remark, ext_fields={name: str(m) for name, m in zip(FIELDS, _MARKERS, strict=False)}
    )
    sample.opaque = _MARKERS[-1]
    rest = encode_json_header(sample)
    pieces = []
    for marker in _MARKERS:
        before, found, rest = rest.partition(str(marker).encode())
        if not found or str(marker).encode() in rest:
            raise ValueError(f"the sample header has marker {marker} {'twice' if found else 'not'}")
        pieces.append(before)
    pieces.append(rest)
    return tuple(pieces)


def pull_reply_head(pieces: tuple[bytes, ...], values: tuple[int, ...], body_length: int) -> bytes:
    """The Python twin of ``_record.pull_reply_head``: the frame's length, its header word
    (JSON) and the header, ``pieces`` with ``values`` in decimal between them."""
    parts: list[bytes] = []
    for piece, value in zip(pieces, values, strict=False):
        parts += (piece, str(value).encode())
    parts.append(pieces[-1])
    header = b"".join(parts)
    return FRAME_PREFIX_STRUCT.pack(4 + len(header) + body_length, len(header)) + header


def _code(h: PullMessageRequestHeader, result: GetMessageResult) -> int:
    code = STATUS_TO_RESPONSE[result.status]
    if code is not None:
        return code
    return ResponseCode.PULL_OFFSET_MOVED if h.queue_offset != 0 else ResponseCode.PULL_NOT_FOUND


def _answer(h: PullMessageRequestHeader, result: GetMessageResult) -> RemotingCommand:
    body = result.body if result.body is not None else b"".join(result.message_buffers)
    return RemotingCommand.create_response(
        _code(h, result), result.status.name, ext_fields=_response_fields(result), body=body
    )


def _response_fields(result: GetMessageResult) -> dict[str, str]:
    """``PullMessageResponseHeader(...).to_ext_fields()`` with suggestWhichBrokerId 0 (the
    caller sets it), written out: one dict per pull, no header object."""
    return {
        "suggestWhichBrokerId": "0",
        "nextBeginOffset": str(result.next_begin_offset),
        "minOffset": str(result.min_offset),
        "maxOffset": str(result.max_offset),
    }
