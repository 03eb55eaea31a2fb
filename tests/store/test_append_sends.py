"""Pass-through sends (``SendPut``) encoded by C straight into the mapped file
(``append_sends``) against the Python path, the reference (``ROCKETQ_NATIVE=0``: the put
built into a MessageExt, encoded and appended by ``_append_locked``): the same commitlog
bytes, results, queue offsets and refusals, a file roll mid-burst included."""

from __future__ import annotations

import random
from array import array
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.common import native_record
from rocketq.common.message_const import MessageSysFlag
from rocketq.common.message_id import host_to_bytes
from rocketq.store.commitlog_send import SendPut, SendsPutResult
from rocketq.store.config import FlushDiskType
from rocketq.store.message_store import MessageStore
from rocketq.store.message_writer import PutRequest
from rocketq.store.results import PutMessageResult, PutMessageStatus
from rocketq.store.sends_now import put_sends_now, sends_wait_for_none
from rocketq.testing.store import SEGMENT_BYTES, commit_log_config, commitlog_bytes, new_msg

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(native_record.COMPILED is None, reason="rocketq._native not built"),
]

BORN = host_to_bytes(("127.0.0.1", 54321))
BORN_V6 = host_to_bytes(("::1", 40000))
STORE = host_to_bytes(("127.0.0.1", 10911))
PROPS = b"TAGS\x01t\x02KEYS\x01k\x02CLUSTER\x01DefaultCluster\x02"


@pytest.fixture(autouse=True)
def _restore_path() -> Iterator[None]:
    before = native_record.RECORD is not None
    yield
    native_record.use(before)


def send(topic: str = "T", queue_id: int = 0, body: bytes = b"x" * 1000, **kw: object) -> SendPut:
    fields: dict[str, object] = {
        "properties": PROPS,
        "flag": 0,
        "sys_flag": 0,
        "born_timestamp": 1700000000000,
        "born_host": BORN,
        "store_host": STORE,
        "reconsume_times": 0,
        "wait_store_msg_ok": True,
    }
    fields.update(kw)
    return SendPut(topic, queue_id, body, **fields)  # type: ignore[arg-type]


Puts = list[PutRequest | SendPut]


def described(r: PutMessageResult) -> tuple[object, ...]:
    a = r.append_result
    if a is None:
        return (r.status, None)
    return (r.status, a.wrote_offset, a.wrote_bytes, a.msg_id, a.queue_offset, a.store_timestamp)


def put_all(
    root: Path, native: bool, bursts: list[Puts], *, lane: bool = False, one_step: bool = False
) -> tuple[bytes, list[object], object]:
    """The bursts put into a fresh store on one path: its commitlog bytes, every put's
    (status, offset, size, msgId, queue offset, store time) and its queue offset table.
    ``lane``: the bursts (SendPuts alone) go through ``async_put_sends``; ``one_step``:
    through ``put_sends_now`` (the broker's flush on a store where none waits)."""
    native_record.use(native)
    store = MessageStore(commit_log_config(root, flush_disk_type="ASYNC_FLUSH"))
    store.load()
    store.start()
    try:
        seen: list[object] = []
        assert sends_wait_for_none(store)  # ASYNC_FLUSH, ASYNC_MASTER
        for burst in bursts:
            if one_step:
                values, now = put_sends_now(store, burst)  # type: ignore[arg-type]
                sends = SendsPutResult(values, now, store.commit_log.msg_id_prefix, [], None)
                seen += [described(sends.put_result(i)) for i in range(len(burst))]
            elif lane:
                sends = store.async_put_sends(burst)  # type: ignore[arg-type]
                assert (sends.waiting, sends.durable) == ([], None)  # ASYNC_FLUSH: none waits
                seen += [described(sends.put_result(i)) for i in range(len(burst))]
            else:
                seen += [described(r) for r in store.async_put_each(burst).results]
        return commitlog_bytes(store), seen, dict(store.commit_log.topic_queue_table)
    finally:
        store.shutdown()


def both_paths(tmp_path: Path, bursts: list[Puts]) -> tuple[bytes, list[object]]:
    native = put_all(tmp_path / "c", True, bursts)
    python = put_all(tmp_path / "py", False, bursts)
    assert native[0] == python[0]
    assert native[1] == python[1]
    assert native[2] == python[2]
    return native[0], native[1]


def test_a_burst_rolling_the_file_is_stored_alike_on_both_paths(tmp_path: Path) -> None:
    burst: Puts = [send(queue_id=i % 3, body=bytes([i]) * (900 + i)) for i in range(150)]
    data, seen = both_paths(tmp_path, [burst, burst[:10]])
    assert len(data) > 2 * SEGMENT_BYTES  # two rolls, each ending its file with a blank
    assert all(s[0] is PutMessageStatus.PUT_OK for s in seen)  # type: ignore[index]
    queue_offsets = [s[4] for s in seen[:6]]  # type: ignore[index]
    assert queue_offsets == [0, 0, 0, 1, 1, 1]


def test_sends_mixed_with_other_puts_and_refusals_are_stored_alike(tmp_path: Path) -> None:
    long_topic = "%RETRY%" + "g" * 150  # a V2 record: two TOPICLENGTH bytes
    burst: Puts = [
        send(),
        PutRequest(new_msg("T", 0, b"a message", {"TAGS": "m"})),
        send(long_topic, 1, b"long topic"),
        send(born_host=BORN_V6, body=b"v6"),
        send(properties=b"P\x01" + b"v" * 32_800 + b"\x02"),  # PROPERTIES_SIZE_EXCEEDED
        send("bad topic!", body=b"illegal"),  # MESSAGE_ILLEGAL (the topic)
        send(queue_id=-1),  # MESSAGE_ILLEGAL (the queue)
        send(body=b"b" * (4 * 1024 * 1024 + 1)),  # MESSAGE_ILLEGAL (the body)
        send(sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE, body=b"half"),  # no queue unit
        send(flag=2**31 - 1, reconsume_times=7, born_timestamp=-1, body=b""),
        send(wait_store_msg_ok=False),
        send(),
    ]
    _, seen = both_paths(tmp_path, [burst])
    statuses = [s[0] for s in seen]  # type: ignore[index]
    ok, props, illegal = (
        PutMessageStatus.PUT_OK,
        PutMessageStatus.PROPERTIES_SIZE_EXCEEDED,
        PutMessageStatus.MESSAGE_ILLEGAL,
    )
    assert statuses == [ok, ok, ok, ok, props, illegal, illegal, illegal, ok, ok, ok, ok]
    assert seen[8][4] == 0  # type: ignore[index]  # the half: queue offset 0, none taken
    assert seen[-1][4] == 5  # type: ignore[index]


def test_random_sends_are_stored_alike_on_both_paths(tmp_path: Path) -> None:
    rng = random.Random(2211)
    bursts: list[Puts] = []
    for _ in range(12):
        burst: Puts = []
        for _ in range(rng.randrange(1, 40)):
            topic = rng.choice(["A", "B%RETRY", "T" * rng.randrange(1, 300), "Topic_x-1"])
            props = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 60)))
            burst.append(
                send(
                    topic,
                    rng.randrange(4),
                    rng.randbytes(rng.choice([0, 1, 100, 3000, 20_000])),
                    properties=props,
                    flag=rng.randrange(-(2**31), 2**31),
                    sys_flag=rng.choice([0, 1, 2, 4, 8, 12, 0x10, 0x7F]),
                    born_timestamp=rng.randrange(-(2**63), 2**63),
                    born_host=rng.choice([BORN, BORN_V6]),
                    reconsume_times=rng.randrange(-5, 20),
                )
            )
        bursts.append(burst)
    both_paths(tmp_path, bursts)


def test_a_run_of_sends_alone_gets_the_results_of_async_put_each(tmp_path: Path) -> None:
    """``async_put_sends`` (C's figures, no object a put) against ``async_put_each`` on both
    paths: the same bytes, statuses, offsets, msgIds, queue offsets and store times, with a
    roll, the store's refusals and C's in one run, then random runs."""
    rolling: Puts = [send(queue_id=i % 3, body=bytes([i]) * (900 + i)) for i in range(150)]
    refusals: Puts = [
        send(),
        send(properties=b"P\x01" + b"v" * 32_800 + b"\x02"),  # PROPERTIES_SIZE_EXCEEDED
        send("bad topic!", body=b"illegal"),  # MESSAGE_ILLEGAL (the topic)
        send(queue_id=-1),  # MESSAGE_ILLEGAL (the queue)
        send(body=b"b" * (4 * 1024 * 1024 + 1)),  # MESSAGE_ILLEGAL (the body)
        send(sys_flag=MessageSysFlag.TRANSACTION_PREPARED_TYPE, body=b"half"),
        send(wait_store_msg_ok=False),
    ]
    rng = random.Random(2212)
    randoms: list[Puts] = [
        [
            send(
                rng.choice(["A", "B", "T" * rng.randrange(1, 300)]),
                rng.randrange(-1, 4),
                rng.randbytes(rng.choice([0, 100, 20_000])),
                born_host=rng.choice([BORN, BORN_V6]),
            )
            for _ in range(rng.randrange(1, 30))
        ]
        for _ in range(6)
    ]
    lone = [[put] for put in refusals]  # put_sends_now's lone put (sync 1), each outcome
    bursts = [rolling, refusals, [send("only bad!")], *randoms, *lone]
    lane = put_all(tmp_path / "lane", True, bursts, lane=True)
    one_step = put_all(tmp_path / "now", True, bursts, one_step=True)
    each = put_all(tmp_path / "each", True, bursts)
    python = put_all(tmp_path / "py", False, bursts)
    assert lane == each
    assert one_step == lane
    assert lane == python
    statuses = [s[0] for s in lane[1][150:157]]  # type: ignore[index]
    ok, props, illegal = (
        PutMessageStatus.PUT_OK,
        PutMessageStatus.PROPERTIES_SIZE_EXCEEDED,
        PutMessageStatus.MESSAGE_ILLEGAL,
    )
    assert statuses == [ok, props, illegal, illegal, illegal, ok, ok]


def test_sends_alone_wait_for_the_group_commit_and_refuse_as_the_store_does(
    tmp_path: Path,
) -> None:
    native_record.use(True)
    store = MessageStore(commit_log_config(tmp_path, flush_disk_type=FlushDiskType.SYNC_FLUSH))
    store.load()
    store.start()
    try:
        puts = [send(), send(wait_store_msg_ok=False), send("bad topic!"), send()]
        result = store.async_put_sends(puts)
        assert result.waiting == [0, 3]  # WAIT=false and the refusal do not wait
        assert result.durable is not None
        assert result.durable.result(timeout=10) is PutMessageStatus.PUT_OK
        assert (
            store.commit_log.mapped_file_queue.flushed_where
            >= result.values[13] + result.values[14]
        )
        store.disk_full = True  # the store's own refusal: every put, as async_put_each's
        refused = store.async_put_sends(puts[:2])
        each = store.async_put_each(puts[:2])
        assert [described(refused.put_result(i)) for i in range(2)] == [
            described(r) for r in each.results
        ]
        assert each.results[0].status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    finally:
        store.shutdown()


def test_append_sends_refuses_what_is_no_send_and_rejects_bad_arguments() -> None:
    compiled = native_record.COMPILED
    assert compiled is not None
    dest = bytearray(4096)
    slots = array("q", bytes(8 * 4 * 4))
    puts: list[object] = [
        ("T", 0),
        send(born_host=b"short"),
        send(queue_id="0"),  # type: ignore[arg-type]
        send(body=b"ok"),
    ]
    table: dict[str, int] = {}
    nxt, pos = compiled.append_sends(dest, 0, 4096, 0, puts, 0, table, 1, 10_000, slots)
    status = [slots[4 * k] for k in range(4)]
    assert (nxt, status, table) == (4, [2, 2, 2, 0], {"T-0": 1})
    assert pos == slots[14] > 0
    assert dest[pos:] == bytes(4096 - pos)
    for bad in (
        (dest, -1, 4096, 0, puts, 0, table, 1, 10_000, slots),
        (dest, 0, 8192, 0, puts, 0, table, 1, 10_000, slots),  # past the buffer
        (dest, 0, 4096, 0, puts, 5, table, 1, 10_000, slots),
        (dest, 0, 4096, 0, puts, 0, table, 1, 10_000, array("q", [0])),  # no slot for each
        (bytes(10), 0, 10, 0, puts, 0, table, 1, 10_000, slots),  # not writable
        (dest, 0, 4096, 0, tuple(puts), 0, table, 1, 10_000, slots),
    ):
        with pytest.raises((ValueError, TypeError, BufferError)):
            compiled.append_sends(*bad)


def test_one_step_serves_only_a_store_where_no_put_waits(tmp_path: Path) -> None:
    """``sends_wait_for_none``: the one step is for a running, writable ASYNC_MASTER that
    flushes in the background; SYNC_FLUSH (a group commit to wait for), a full disk and a
    stopped store take ``async_put_sends``, which words their statuses."""
    native_record.use(True)
    sync = MessageStore(commit_log_config(tmp_path / "s", flush_disk_type=FlushDiskType.SYNC_FLUSH))
    sync.load()
    sync.start()
    try:
        assert not sends_wait_for_none(sync)
    finally:
        sync.shutdown()
    store = MessageStore(commit_log_config(tmp_path / "a", flush_disk_type="ASYNC_FLUSH"))
    store.load()
    assert not sends_wait_for_none(store)  # not started
    store.start()
    try:
        assert sends_wait_for_none(store)
        store.disk_full = True
        assert not sends_wait_for_none(store)
        store.disk_full = False
        assert sends_wait_for_none(store)
    finally:
        store.shutdown()
    assert not sends_wait_for_none(store)
