"""The producer's send codec in C (``rocketq._native._client``) against the Python reference:
the same SEND_MESSAGE_V2 fields and frame bytes, the same SendResult values from a reply, and
real sends (traced, ACL-signed) that store the same message on both paths."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.admin import AsyncAdminClient
from rocketq.client import Message, SendStatus
from rocketq.client import send_codec as sc
from rocketq.client.aio import Producer
from rocketq.client.config import ProducerConfig
from rocketq.common.message import MessageQueue
from rocketq.common.message_decoder import decode_message
from rocketq.common.native_record import ENV_SWITCH
from rocketq.errors import RemotingCommandError
from rocketq.remoting import native_frames
from rocketq.remoting.codec import encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.testing import until
from rocketq.testing.acl import ACCOUNTS, NORMAL, AclCluster, run_acl_cluster
from rocketq.testing.cluster import FAST_CLIENT, Cluster, run_cluster

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(sc.COMPILED is None, reason="extension not built"),
]

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
# text as messages carry it: any code point but lone surrogates (those C hands to Python)
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
PROPERTIES = st.dictionaries(TEXT, st.none() | TEXT, max_size=8)


@pytest.fixture(autouse=True)
def _restore_paths() -> Iterator[None]:
    codec, frames = sc.CODEC, native_frames.FRAMES
    yield
    sc.CODEC = codec
    native_frames.use(frames is not None)


def fields_on(native: bool, config: ProducerConfig, msg: Message, *args: int) -> dict[str, str]:
    sc.use(native)
    queue_id, sys_flag, born = args
    return sc.message_ext_fields(config, msg, queue_id, sys_flag, born, batch=False)


def frame(fields: dict[str, str], body: bytes, *, native: bool) -> bytes:
    native_frames.use(native)
    cmd = RemotingCommand(code=RequestCode.SEND_MESSAGE_V2, opaque=7, ext_fields=fields, body=body)
    return encode(cmd)


@given(
    group=TEXT.filter(bool),
    topic=TEXT,
    props=PROPERTIES,
    flag=INT64,
    numbers=st.tuples(INT64, INT64, INT64),
    batch=st.booleans(),
)
def test_c_writes_the_send_fields_and_frame_bytes_of_the_python_reference(
    group: str,
    topic: str,
    props: dict[str, str | None],
    flag: int,
    numbers: tuple[int, int, int],
    batch: bool,
) -> None:
    config = ProducerConfig(producer_group=group)
    msg = Message(topic, b"body", flag=flag)
    msg.properties.update(props)
    assert sc.COMPILED is not None
    c_fields = sc.COMPILED.send_v2_fields(
        group, topic, config.create_topic_key, config.default_topic_queue_nums, *numbers,
        flag, msg.properties if sc.header_carries_properties(numbers[1], batch=batch) else "",
        0, False, None, batch,
    )  # fmt: skip
    assert c_fields is not None  # C took it: the comparison below compares two paths
    python = sc.python_ext_fields(config, msg, *numbers[:2], numbers[2], batch=batch)
    assert list(c_fields.items()) == list(python.items())  # the JSON header keeps this order
    assert frame(c_fields, msg.body, native=True) == frame(python, msg.body, native=False)
    assert fields_on(True, config, msg, *numbers) == fields_on(False, config, msg, *numbers)


def test_a_captured_style_message_is_written_byte_for_byte_the_same() -> None:
    config = ProducerConfig(producer_group="PG_A")
    msg = Message("TopicTest", b"Hello", tags="TagA", keys=["k1", "k2"])
    msg.put_property("UNIQ_KEY", "7F000001000018B4AAC20000000000A1")
    msg.put_property("ctl", 'quote " backslash \\ tab \t nul \x00 é 中')
    msg.put_property("skipped", None)
    c_fields = fields_on(True, config, msg, 3, 0, 1_700_000_000_000)
    assert c_fields["i"] == (
        "TAGS\x01TagA\x02KEYS\x01k1 k2\x02"
        "UNIQ_KEY\x017F000001000018B4AAC20000000000A1\x02"
        'ctl\x01quote " backslash \\ tab \t nul \x00 é 中\x02'
    )
    python = fields_on(False, config, msg, 3, 0, 1_700_000_000_000)
    assert frame(c_fields, msg.body, native=True) == frame(python, msg.body, native=False)


def test_values_c_does_not_take_go_to_the_python_reference() -> None:
    assert sc.COMPILED is not None
    args: list[object] = ["g", "t", "TBW102", 4, 1, 0, 5, 0, {}, 0, False, None, False]
    assert sc.COMPILED.send_v2_fields(*args) is not None  # type: ignore[arg-type]
    for index, value in [(8, {"k": "\ud800"}), (8, {"k": 1}), (3, 2**64), (7, True), (0, 1)]:
        changed = list(args)
        changed[index] = value
        assert sc.COMPILED.send_v2_fields(*changed) is None, (index, value)  # type: ignore[arg-type]
    config = ProducerConfig(producer_group="g")
    msg = Message("t", b"", properties={"lone": "\ud800"})
    assert fields_on(True, config, msg, 1, 0, 5) == fields_on(False, config, msg, 1, 0, 5)


@pytest.mark.parametrize(("switch", "native"), [("0", False), ("1", True)])
def test_rocketq_native_selects_the_send_codec_at_import(switch: str, native: bool) -> None:
    code = "from rocketq.client import send_codec; print(send_codec.CODEC is not None)"
    env = {**os.environ, ENV_SWITCH: switch}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == str(native), out.stderr


DIGITS = st.integers(min_value=0, max_value=10**18 - 1).map(str)
REPLY_TEXT = DIGITS | st.text(max_size=6)


@given(
    msg_id=st.none() | TEXT,
    queue_id=st.none() | REPLY_TEXT,
    offset=st.none() | REPLY_TEXT,
    extra=st.dictionaries(
        st.sampled_from(["transactionId", "recallHandle", "MSG_REGION", "TRACE_ON", "x"]),
        st.sampled_from(["false", "true", "", "r1"]) | TEXT,
    ),
)
def test_c_reads_the_send_reply_as_the_python_reference(
    msg_id: str | None, queue_id: str | None, offset: str | None, extra: dict[str, str]
) -> None:
    named = {"msgId": msg_id, "queueId": queue_id, "queueOffset": offset}
    fields = extra | {key: value for key, value in named.items() if value is not None}
    assert sc.COMPILED is not None
    got = sc.COMPILED.send_result_values(fields)
    try:
        expected = sc.python_result_values(fields)
    except RemotingCommandError:
        assert got is None  # Python words the error
        return
    if got is None:  # a form C leaves to Python (" 12", "+1"): never the plain one
        assert not all(v is not None and v.isascii() and v.isdigit() for v in (queue_id, offset))
        return
    assert got == expected


def test_a_reply_becomes_the_same_send_result_on_both_paths() -> None:
    reply = RemotingCommand(
        code=0,
        flag=1,
        ext_fields={"msgId": "7F00", "queueId": "2", "queueOffset": "41", "TRACE_ON": "false"},
    )
    mq = MessageQueue("T", "broker-a", 0)
    results = []
    for native in (True, False):
        sc.use(native)
        results.append(sc.send_result(reply, mq, "uniq"))
    assert results[0] == results[1]
    assert (results[0].queue_offset, results[0].message_queue.queue_id) == (41, 2)
    assert results[0].trace_on is False
    assert results[0].region_id == "DefaultRegion"


# --------------------------------------------------------------------------- real sends


@pytest.fixture
async def trace_cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    async with run_cluster(tmp_path, trace_topic_enable=True) as running:
        yield running


async def test_traced_sends_store_the_same_message_on_both_paths(trace_cluster: Cluster) -> None:
    cluster = trace_cluster
    stored = []
    ids = []
    async with Producer(
        "codec-pg", namesrv_addr=cluster.addr, enable_msg_trace=True, **FAST_CLIENT
    ) as producer:
        for native in (True, False):
            sc.use(native)
            native_frames.use(native)
            msg = Message("CodecT", b"body", tags="T", keys="k", properties={"p": "é\x01;"})
            result = await producer.send(msg)
            assert result.status is SendStatus.SEND_OK
            ids.append(result.msg_id)
            mq = result.message_queue

            def found(mq: MessageQueue = mq, offset: int = result.queue_offset) -> list[bytes]:
                store = cluster.broker.message_store
                return store.get_message("G", mq.topic, mq.queue_id, offset, 1).message_buffers

            assert await until(lambda: bool(found()), 10)
            record = decode_message(found()[0], check_crc=False)
            assert record.properties["UNIQ_KEY"] == result.msg_id
            del record.properties["UNIQ_KEY"]
            stored.append((record.properties, record.body))
        trace = producer.trace_dispatcher
        assert trace is not None
        await trace.flush()
    async with AsyncAdminClient(cluster.addr) as admin, asyncio.timeout(20):
        for msg_id in ids:  # a Pub record of each send (the index follows the put)
            views = await admin.query_msg_trace_by_id(msg_id)
            while not [v for v in views if v.msg_type == "Pub"]:
                await asyncio.sleep(0.05)
                views = await admin.query_msg_trace_by_id(msg_id)
    assert stored[0] == stored[1]
    assert stored[0][0]["p"] == "é\x01;"


@pytest.fixture
async def acl_cluster(tmp_path: Path) -> AsyncIterator[AclCluster]:
    async with run_acl_cluster(tmp_path, ACCOUNTS) as running:
        yield running


async def test_signed_sends_pass_acl_on_both_paths(acl_cluster: AclCluster) -> None:
    async with Producer(
        "codec-pg",
        namesrv_addr=acl_cluster.addr,
        access_key=NORMAL[0],
        secret_key=NORMAL[1],
        **FAST_CLIENT,
    ) as producer:
        for native in (True, False):
            sc.use(native)
            result = await producer.send(Message("AclCodecT", b"signed", properties={"p": "v"}))
            assert result.status is SendStatus.SEND_OK
