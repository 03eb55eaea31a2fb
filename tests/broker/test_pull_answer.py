"""The store status -> PULL_MESSAGE reply code table (PullMessageProcessor)."""

from __future__ import annotations

import pytest

from rocketq.broker.processors.pull import _answer
from rocketq.remoting.protocol.headers import PullMessageRequestHeader, PullMessageResponseHeader
from rocketq.response_code import ResponseCode
from rocketq.store import GetMessageResult, GetMessageStatus


def header(offset: int) -> PullMessageRequestHeader:
    return PullMessageRequestHeader(
        consumer_group="g",
        topic="T",
        queue_id=0,
        queue_offset=offset,
        max_msg_nums=32,
        sys_flag=6,
        commit_offset=-1,
        suspend_timeout_millis=15000,
        sub_version=0,
        subscription="*",
    )


@pytest.mark.parametrize(
    ("status", "offset", "code"),
    [
        (GetMessageStatus.NO_MATCHED_MESSAGE, 3, ResponseCode.PULL_RETRY_IMMEDIATELY),
        (GetMessageStatus.MESSAGE_WAS_REMOVING, 3, ResponseCode.PULL_RETRY_IMMEDIATELY),
        (GetMessageStatus.OFFSET_FOUND_NULL, 3, ResponseCode.PULL_NOT_FOUND),
        (GetMessageStatus.OFFSET_OVERFLOW_ONE, 3, ResponseCode.PULL_NOT_FOUND),
        (GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0, ResponseCode.PULL_NOT_FOUND),
        (GetMessageStatus.NO_MESSAGE_IN_QUEUE, 3, ResponseCode.PULL_OFFSET_MOVED),
        (GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, 0, ResponseCode.PULL_NOT_FOUND),
        (GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, 3, ResponseCode.PULL_OFFSET_MOVED),
        (GetMessageStatus.OFFSET_TOO_SMALL, 3, ResponseCode.PULL_OFFSET_MOVED),
        (GetMessageStatus.OFFSET_OVERFLOW_BADLY, 3, ResponseCode.PULL_OFFSET_MOVED),
    ],
)
def test_store_status_maps_to_rocketmq_reply_code_with_all_four_header_fields(
    status: GetMessageStatus, offset: int, code: int
) -> None:
    result = GetMessageResult(status, next_begin_offset=7, min_offset=1, max_offset=9)
    response = _answer(header(offset), result)
    assert response.code == code
    assert response.remark == status.name
    assert response.ext_fields == {
        "suggestWhichBrokerId": "0",
        "nextBeginOffset": "7",
        "minOffset": "1",
        "maxOffset": "9",
    }
    assert response.body == b""


def test_found_records_are_concatenated_into_the_body() -> None:
    result = GetMessageResult(
        GetMessageStatus.FOUND,
        next_begin_offset=2,
        max_offset=2,
        message_buffers=[b"rec1", b"rec2"],
    )
    response = _answer(header(0), result)
    assert response.code == ResponseCode.SUCCESS
    assert response.body == b"rec1rec2"


@pytest.mark.parametrize("offsets", [(0, 0, 0), (7, -1, 1 << 40), (-5, 3, 9)])
def test_reply_fields_are_the_response_header_s(offsets: tuple[int, int, int]) -> None:
    next_begin, low, high = offsets
    result = GetMessageResult(GetMessageStatus.FOUND, next_begin, low, high)
    fields = _answer(header(0), result).ext_fields
    expected = PullMessageResponseHeader(
        suggest_which_broker_id=0, next_begin_offset=next_begin, min_offset=low, max_offset=high
    ).to_ext_fields()
    assert fields == expected
    assert list(fields) == list(expected)  # the key order is the frame's
