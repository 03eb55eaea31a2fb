"""A POP reply's decoding (MQClientAPIImpl.processPopResponse): each message's handle built from
one prefix per (topic, queue) is the handle ExtraInfoUtil.buildExtraInfo writes for it."""

from __future__ import annotations

from rocketq.client.aio.pop_api import popped_messages
from rocketq.common.extra_info import (
    PROPERTY_POP_CK,
    build_extra_info,
    build_msg_offset_info,
    build_start_offset_info,
)
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import encode_message
from rocketq.remoting.protocol.command import RemotingCommand

POP_TIME, INVISIBLE, REVIVE_QID = 1764264000123, 60000, 3
# (stored topic, queue, offset): two queues of the topic and the V1 retry topic's queue 0
POPPED = [("T", 0, 5), ("T", 1, 9), ("T", 0, 6), ("%RETRY%g_T", 0, 2), ("T", 1, 10)]
STARTS = {("T", 0): 5, ("T", 1): 8, ("%RETRY%g_T", 0): 2}


def pop_reply(
    order_count_info: str | None = None, broker_handle: str | None = None
) -> RemotingCommand:
    body = bytearray()
    for topic, qid, offset in POPPED:
        properties = {"UNIQ_KEY": f"7F00000100{qid}{offset:010X}"}
        if broker_handle is not None and topic.startswith("%RETRY%"):
            properties[PROPERTY_POP_CK] = broker_handle  # the broker set it: kept as it is
        msg = MessageExt(topic=topic, body=b"x", properties=properties)  # type: ignore[arg-type]
        msg.queue_id, msg.queue_offset = qid, offset
        body += encode_message(msg)
    ext = {
        "popTime": str(POP_TIME),
        "invisibleTime": str(INVISIBLE),
        "reviveQid": str(REVIVE_QID),
        "restNum": "0",
        "startOffsetInfo": build_start_offset_info([(t, q, s) for (t, q), s in STARTS.items()]),
        "msgOffsetInfo": build_msg_offset_info([(t, q, [o]) for t, q, o in POPPED]),
    }
    if order_count_info is not None:
        ext["orderCountInfo"] = order_count_info
    command = RemotingCommand.create_request(0, ext)
    command.body = bytes(body)
    return command


def test_each_popped_message_gets_the_handle_build_extra_info_writes() -> None:
    _, msgs = popped_messages(pop_reply(), "broker-a")
    assert [m.properties[PROPERTY_POP_CK] for m in msgs] == [
        build_extra_info(STARTS[(t, q)], POP_TIME, INVISIBLE, REVIVE_QID, t, "broker-a", q, o)
        for t, q, o in POPPED
    ]
    assert msgs[3].properties[PROPERTY_POP_CK] == "2 1764264000123 60000 3 1 broker-a 0 2"
    assert all(m.reconsume_times == 0 for m in msgs)


def test_a_handle_the_broker_set_is_kept_and_fifo_counts_are_read() -> None:
    counts = "0 qo0%6 4;0 1 2"  # message (T, 0, 6) delivered 4 times, queue 1 at least 2
    _, msgs = popped_messages(pop_reply(counts, broker_handle="7 1 2 3 1 b 0 2"), "broker-a")
    assert msgs[3].properties[PROPERTY_POP_CK] == "7 1 2 3 1 b 0 2"
    assert [m.reconsume_times for m in msgs] == [0, 2, 4, 0, 2]


def test_the_handles_are_also_given_in_the_messages_order() -> None:
    handles: list[str] = []
    _, msgs = popped_messages(pop_reply(broker_handle="7 1 2 3 1 b 0 2"), "broker-a", handles)
    assert handles == [m.properties[PROPERTY_POP_CK] for m in msgs]
    assert handles[3] == "7 1 2 3 1 b 0 2"  # the broker's own, kept in its place
    assert len(handles) == len(POPPED)
