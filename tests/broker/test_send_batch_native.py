"""A broker's batch sends on the C path (``batch_puts`` then ``append_sends`` in one lock
hold) against the Python path (``ROCKETQ_NATIVE=0``), the reference: the same batches to two
fresh brokers leave the same commitlog (file rolls mid-batch included) and the same consume
queue files, byte for byte but for the fields that name the broker's and the sender's ports
and the store time, and get the same answers (code, remark, queueOffset, the msgId list)."""

from __future__ import annotations

import asyncio
import random
import types
import zlib
from pathlib import Path

import pytest

from rocketq.broker.controller import BrokerController
from rocketq.common import native_record
from rocketq.common.message import Message
from rocketq.common.message_decoder import encode_batch_messages
from rocketq.common.message_id import decode_message_id
from rocketq.remoting import native_frames
from rocketq.remoting.codec import FrameDecoder, encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.store.commitlog_send import SendPut
from rocketq.testing.batch_fuzz import check_batch_puts
from rocketq.testing.broker import run_broker
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request
from tests.broker.send_bursts import masked_commitlog

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
]

SEGMENT = 64 * 1024
WAIT_S = 10.0
BATCH = RequestCode.SEND_BATCH_MESSAGE


async def request(addr: str, command: RemotingCommand) -> RemotingCommand:
    """One request on a connection of its own; its reply."""
    host, port = addr.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(encode(command))
        decoder = FrameDecoder()
        async with asyncio.timeout(WAIT_S):
            while True:
                data = await reader.read(65536)
                assert data, "the broker closed the connection"
                replies = decoder.feed(data)
                if replies:
                    return replies[0]
    finally:
        writer.close()


def batch_of(topic: str, msgs: list[Message], **kw: object) -> RemotingCommand:
    return send_request(topic, encode_batch_messages(msgs), batch=True, code=BATCH, **kw)  # type: ignore[arg-type]


def message(topic: str, body: bytes, **props: str) -> Message:
    m = Message(topic, body)
    m.properties.update(props)
    return m


def consume_queues(broker: BrokerController) -> dict[str, bytes]:
    root = Path(broker.message_store.config.store_path_root_dir, "consumequeue")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


async def batches_on(
    tmp_path: Path, native: bool, batches: list[RemotingCommand]
) -> tuple[list[bytes], dict[str, bytes], list[object], int]:
    native_frames.use(native)
    native_record.use(native)
    calls = 0
    compiled = native_record.RECORD
    if compiled is not None:  # batch_puts's takes counted: the C path must have run

        def counting(*args: object) -> list[SendPut] | None:
            nonlocal calls
            puts = compiled.batch_puts(*args)
            calls += puts is not None
            return puts

        paths = {name: getattr(compiled, name) for name in dir(compiled) if name[0] != "_"}
        native_record.RECORD = types.SimpleNamespace(**(paths | {"batch_puts": counting}))  # type: ignore[assignment]
    props = small_store_properties(SEGMENT)
    async with run_broker(tmp_path / f"native{int(native)}", store_properties=props) as broker:
        answers: list[object] = []
        for command in batches:
            r = await request(broker.broker_addr, command)
            fields = dict(r.ext_fields)
            ids = fields.pop("msgId", None)
            offsets = None if ids is None else [decode_message_id(i)[1] for i in ids.split(",")]
            answers.append((r.code, r.remark, fields, offsets))
        assert broker.message_store.wait_for_dispatch(WAIT_S)
        return masked_commitlog(broker), consume_queues(broker), answers, calls


async def test_batches_are_stored_and_answered_alike_on_both_paths(tmp_path: Path) -> None:
    batches = [
        batch_of(
            f"Bat{i % 2}",
            [
                message(
                    f"Bat{i % 2}",
                    bytes([k % 251]) * (500 + 37 * k),
                    TAGS=f"t{k % 3}",
                    KEYS=f"k{i}-{k}",
                    UNIQ_KEY=f"{i:08X}{k:024X}",
                )
                for k in range(32)
            ],
            queue_id=i % 3,
        )
        for i in range(12)  # ~0.5 MB over 64 KiB files: files roll mid-batch
    ]
    zipped = encode_batch_messages([message("Bat0", b"z" * 3000, TAGS="z") for _ in range(4)])
    compressed = send_request("Bat0", zlib.compress(zipped), batch=True, code=BATCH, sys_flag=1)
    odd = [
        compressed,  # inflated, then C's
        batch_of("Bat1", [message("Bat1", b"u", u="\u4e2d\u6587", WAIT="false")]),
        batch_of("Bat0", [message("Bat0", b"no props")], extra={"WAIT": "false"}),
        # what C leaves to Python: a DELAY, a timer, a half, a CLUSTER, a bad body, too big
        batch_of("Bat0", [message("Bat0", b"d", DELAY="0"), message("Bat0", b"e")]),
        batch_of("Bat0", [message("Bat0", b"d", DELAY="2")]),
        batch_of("Bat1", [message("Bat1", b"t", TIMER_DELAY_SEC="3")]),
        batch_of("Bat1", [message("Bat1", b"h", TRAN_MSG="true")]),
        batch_of("Bat1", [message("Bat1", b"c", CLUSTER="Other")]),
        send_request("Bat1", b"\x00\x00\x00\x05garbage", batch=True, code=BATCH),
        send_request("Bat1", b"", batch=True, code=BATCH),
        batch_of("Bat0", [message("Bat0", b"x" * 5_000_000)]),
    ]
    native = await batches_on(tmp_path, True, [*batches, *odd])
    python = await batches_on(tmp_path, False, [*batches, *odd])
    records, queues, answers, calls = native
    assert calls == 12 + 3  # every batch C may take, the compressed one too
    assert python[3] == 0
    assert len([r for r in records if len(r) == 8]) >= 2  # files ended by a blank record
    codes = [a[0] for a in answers]  # type: ignore[index]
    assert codes[:15] == [ResponseCode.SUCCESS] * 15
    assert ResponseCode.MESSAGE_ILLEGAL in codes[15:]
    assert [len(a[3] or ()) for a in answers[:12]] == [32] * 12  # type: ignore[index]
    assert records == python[0]
    assert queues == python[1]
    assert answers == python[2]


def test_c_declines_what_the_python_path_must_decide() -> None:
    compiled = native_record.COMPILED
    assert compiled is not None
    head = ("T", 1, 0, 1_700_000_000_000, bytes(8), bytes(8), 0, True)
    rules = ((b"DELAY", b"CLUSTER"), b"WAIT", b"CLUSTER\x01C\x02", 100)
    good = encode_batch_messages([message("T", b"a", WAIT="true", K="v"), message("T", b"b")])
    puts = compiled.batch_puts(good, head, rules, SendPut)
    assert puts is not None
    assert [p.properties for p in puts] == [b"K\x01v\x02CLUSTER\x01C\x02", b"CLUSTER\x01C\x02"]
    assert [p.body for p in puts] == [b"a", b"b"]
    assert all(isinstance(p, SendPut) and p.topic == "T" for p in puts)
    declined = [
        b"",
        good[:-1],  # truncated
        good + b"\x00",  # trailing byte
        encode_batch_messages([message("T", b"a", DELAY="1")]),
        encode_batch_messages([message("T", b"x" * 101)]),
        encode_batch_messages([Message("T", b"a")])[:-2] + b"\x00\x02",  # PROPERTIESLENGTH
    ]
    bad_utf8 = bytearray(encode_batch_messages([message("T", b"a", K="\u00e9")]))
    bad_utf8[-2] = 0xFF  # the second byte of the é
    declined.append(bytes(bad_utf8))
    for body in declined:
        assert compiled.batch_puts(body, head, rules, SendPut) is None, body


def test_a_short_fuzz_run_finds_no_difference() -> None:
    seed = random.randrange(1 << 31)
    rng = random.Random(seed)
    for _ in range(3000):
        assert check_batch_puts(rng) is None, seed
