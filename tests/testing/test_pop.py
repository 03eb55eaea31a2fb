"""The testing client's batch ack in C (``rocketq._native._pop_client``, pop_client.c) against
its Python reference (``batch_ack_body_reference``: ``group_handles`` and
``encode_batch_ack_body``): byte for byte for the handles a pop gives (C must write those), the
same or declined for edited ones (the reference then writes or raises), and the switch
(``native_record.use``) selects the reference."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.common import native_record
from rocketq.common.extra_info import ExtraInfoError, build_msg_offset_info, build_start_offset_info
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import encode_message
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing import pop, pop_fuzz
from rocketq.testing.pop import (
    batch_ack_body_reference,
    batch_ack_request,
    popped_handles,
    popped_of,
)

pytestmark = pytest.mark.skipif(pop.COMPILED_CLIENT is None, reason="rocketq._native not built")

NAMES = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12).filter(
    lambda s: '"' not in s and "\\" not in s
)
LONG = st.integers(-(2**63), 2**63 - 1)


def c_body(broker: str, group: str, topic: str, handles: list[str]) -> bytes | None:
    assert pop.COMPILED_CLIENT is not None
    body: bytes | None = pop.COMPILED_CLIENT.batch_ack_body(broker, group, topic, handles)
    return body


@st.composite
def pop_handles(draw: st.DrawFn) -> list[str]:
    """The handles of up to four pops (each a checkpoint of offsets past its start), mixed."""
    handles: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        ck = draw(st.integers(-(2**63), 2**63 - 4096))
        fields = [ck, draw(LONG), draw(LONG), draw(st.integers(0, 999))]
        mark = draw(st.sampled_from("012"))
        prefix = (
            f"{' '.join(map(str, fields))} {mark} {draw(NAMES.filter(lambda s: ' ' not in s))} "
        )
        prefix += f"{draw(st.integers(-1, 1023))} "
        diffs = draw(st.lists(st.integers(0, 40) | st.integers(0, 4095), min_size=1, max_size=40))
        handles += [f"{prefix}{ck + d}" for d in diffs]
    return draw(st.permutations(handles)) if draw(st.booleans()) else handles


@given(NAMES, NAMES, NAMES, pop_handles())
def test_c_writes_the_references_body_for_a_pops_handles(
    broker: str, group: str, topic: str, handles: list[str]
) -> None:
    assert c_body(broker, group, topic, handles) == batch_ack_body_reference(
        broker, group, topic, handles
    )


@given(NAMES, pop_handles(), st.integers(0, 2**32), st.sampled_from(pop_fuzz.HANDLE_PIECES))
def test_c_writes_an_edited_handle_as_the_reference_or_declines(
    name: str, handles: list[str], at: int, piece: str
) -> None:
    if handles:
        i = at % len(handles)
        cut = at % (len(handles[i]) + 1)
        handles[i] = handles[i][:cut] + piece + handles[i][cut:]
    got = c_body(name, name, name, handles)
    try:
        reference: object = batch_ack_body_reference(name, name, name, handles)
    except (ExtraInfoError, ValueError, OverflowError) as exc:
        reference = type(exc)
    assert got is None or got == reference


@pytest.mark.parametrize(
    ("names", "handle"),
    [
        (("b", "G", "T"), "0 1 2 3 0 b 1 0 9"),  # nine fields: parsed by the reference
        (("b", "G", "T"), "0 1 2 3 0 b 1 +5"),  # int() reads a sign C does not
        (("b", "G", "T"), "0 1 2 3 0 b 1 5\n"),  # and the whitespace around a number
        (("b", "G", "T"), "10 1 2 3 0 b 1 4"),  # before its checkpoint: ValueError there
        (("b", "G", "T"), "0 1 2 3 0 b 1 4096"),  # a BitSet past what C writes
        (("b", "G", "T"), "0 1 2 3 3 b 1 0"),  # not a mark
        (("b", "G", "T"), "0 1 2 3 0 b 1 99999999999999999999"),  # past 64 bits
        (("b", "G", "T"), "-51476191534 1 2 3 0 b 1 0"),  # a BitSet of gigabytes: ValueError
        (("b", "G", "T"), "0 1 2 3 0 é 1 0"),  # not ASCII
        (("b", 'G"', "T"), "0 1 2 3 0 b 1 0"),  # a name JSON escapes
        (("b", "G", "é"), "0 1 2 3 0 b 1 0"),
    ],
)
def test_c_declines_what_is_not_plain_and_the_reference_decides(
    names: tuple[str, str, str], handle: str
) -> None:
    assert c_body(*names, [handle]) is None
    try:
        reference: object = batch_ack_request(*names, [handle]).body
    except (ExtraInfoError, ValueError, OverflowError) as exc:
        reference = type(exc)
    try:
        expected: object = batch_ack_body_reference(*names, [handle])
    except (ExtraInfoError, ValueError, OverflowError) as exc:
        expected = type(exc)
    assert reference == expected


def test_more_checkpoints_than_c_groups_go_to_the_reference() -> None:
    handles = [f"{ck} 1 2 3 0 b 1 {ck}" for ck in range(65)]
    assert c_body("b", "G", "T", handles) is None
    assert batch_ack_request("b", "G", "T", handles).body == batch_ack_body_reference(
        "b", "G", "T", handles
    )
    assert c_body("b", "G", "T", handles[:64]) is not None


def test_the_switch_selects_the_reference() -> None:
    handles = [f"7 1 2 3 0 b 1 {7 + i}" for i in range(32)]
    was = native_record.RECORD is not None
    try:
        native_record.use(False)
        assert batch_ack_request("b", "G", "T", handles).body == batch_ack_body_reference(
            "b", "G", "T", handles
        )
    finally:
        native_record.use(was)


def test_a_short_fuzz_run_finds_no_difference_and_reaches_c() -> None:
    rng = random.Random(18)
    for _ in range(2000):
        assert pop_fuzz.check_batch_ack_handles(rng) is None
    written = sum(
        c_body("b", "G", "T", pop_fuzz.random_handles(rng)) is not None for _ in range(200)
    )
    assert written == 200  # unedited handles of plain names: C writes every one


def a_pop_reply(code: int) -> RemotingCommand:
    """A SUCCESS-shaped pop reply of three messages of two queues, answered with ``code``."""
    popped = [("T", 0, 5), ("T", 1, 9), ("T", 0, 6)]
    body = bytearray()
    for topic, qid, offset in popped:
        msg = MessageExt(topic=topic, body=b"x")
        msg.queue_id, msg.queue_offset = qid, offset
        body += encode_message(msg)
    ext = {
        "popTime": "1764264000123", "invisibleTime": "60000", "reviveQid": "3", "restNum": "0",
        "startOffsetInfo": build_start_offset_info([("T", 0, 5), ("T", 1, 9)]),
        "msgOffsetInfo": build_msg_offset_info([(t, q, [o]) for t, q, o in popped]),
    }  # fmt: skip
    return RemotingCommand.create_response(code, ext_fields=ext, body=bytes(body))


def test_popped_handles_are_popped_ofs_without_their_messages() -> None:
    reply = a_pop_reply(ResponseCode.SUCCESS)
    handles = popped_handles(reply, "broker-a")
    assert handles == [p.handle for p in popped_of(a_pop_reply(ResponseCode.SUCCESS), "broker-a")]
    assert handles[2] == "5 1764264000123 60000 3 0 broker-a 0 6"
    assert popped_handles(a_pop_reply(ResponseCode.POLLING_TIMEOUT), "broker-a") == []
