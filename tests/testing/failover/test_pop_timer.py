"""The POP group's came-back check: an acknowledged message popped again is found whichever
path served it, a fresh pop of its queue or a revive into the POP retry topic (whose copy has
the retry queue's offset and names the first copy in ORIGIN_MESSAGE_ID)."""

from __future__ import annotations

from rocketq.common import message_const as mc
from rocketq.common.extra_info import build_extra_info, build_pop_retry_topic
from rocketq.common.message import MessageExt
from rocketq.testing.failover.pop_timer import came_back
from rocketq.testing.pop import Popped

TOPIC = "TopicFaults"
GROUP = "FaultsPop"
ORIGIN_ID = "0A00000100002A9F0000000000001234"


def popped(
    topic: str, queue_id: int, offset: int, body: bytes, **props: str
) -> tuple[Popped, tuple[int, int, bytes]]:
    msg = MessageExt(
        topic=TOPIC, queue_id=queue_id, queue_offset=offset, body=body, properties=dict(props)
    )
    handle = build_extra_info(offset, 1000, 10_000, 3, topic, "broker-b", queue_id, offset)
    return Popped(msg, handle), (queue_id, offset, body)


def test_a_fresh_pop_and_a_revive_of_an_acknowledged_message_are_both_found() -> None:
    acked = {(2, 220, b"p03-00000224"): ("127.0.0.1:1", 5.0, 1)}
    ids = {ORIGIN_ID: (2, 220, b"p03-00000224")}
    fresh, key = popped(TOPIC, 2, 220, b"p03-00000224")
    found = came_back("broker-b", acked, ids, fresh, key, "127.0.0.1:2 (epoch 2)", 8.0)
    assert found is not None
    assert found.key == "p03-00000224@2:220"
    assert found.origin == (2, 220)
    assert "fresh pop of queue 2" in found.detail
    assert "3.00 s later" in found.detail

    retry = build_pop_retry_topic(TOPIC, GROUP)
    revived, key = popped(
        retry, 0, 7, b"p03-00000224", **{mc.PROPERTY_ORIGIN_MESSAGE_ID: ORIGIN_ID}
    )
    revived.msg.reconsume_times = 1
    found = came_back("broker-b", acked, ids, revived, key, "127.0.0.1:2 (epoch 2)", 9.0)
    assert found is not None
    assert found.key == "p03-00000224@2:220"  # named by the acknowledged copy
    assert "revive: retry topic" in found.detail
    assert "reconsumeTimes 1" in found.detail

    other, key = popped(retry, 0, 8, b"p03-00000224", **{mc.PROPERTY_ORIGIN_MESSAGE_ID: "X"})
    assert came_back("broker-b", acked, ids, other, key, "127.0.0.1:2 (epoch 2)", 9.0) is None
    unacked, key = popped(TOPIC, 2, 221, b"p03-00000225")
    assert came_back("broker-b", acked, ids, unacked, key, "127.0.0.1:2 (epoch 2)", 9.0) is None
