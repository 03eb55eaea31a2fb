"""The timer's files byte for byte as RocketMQ 5 writes them (TimerWheel/Slot, TimerLog,
TimerCheckpoint), with values worked out from the Java source: Slot.SIZE 32 with the time
stored as ``timeMs / precisionMs``; TimerLog.UNIT_SIZE 52 (size, prev pos, magic, write time,
delay, commitlog offset, size, String.hashCode of the real topic, reserved); the blank of 16
bytes with BLANK_MAGIC_CODE = 0xBBCCDDEE ^ (1880681586 + 8); TimerCheckpoint's seven longs in
a 4096-byte file."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rocketq.store.timer.timer_checkpoint import (
    FILE_SIZE,
    TimerCheckpoint,
    TimerCheckpointState,
)
from rocketq.store.timer.timer_log import (
    BLANK_MAGIC_CODE,
    MAGIC_DEFAULT,
    MAGIC_DELETE,
    MAGIC_ROLL,
    TIMER_LOG_UNIT_STRUCT,
    UNIT_SIZE,
    TimerLog,
    TimerLogUnit,
    is_magic_ok,
)
from rocketq.store.timer.timer_wheel import SLOT_SIZE, SLOTS_TOTAL, TimerWheel

T = 1_700_000_000_000  # ms; / 1000 = 0x6553F100
TOPIC_TEST_HASH = -1902610879  # "TopicTest".hashCode() = 0x8E987641

i64 = st.integers(-(2**63), 2**63 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)


def test_the_wheel_has_two_laps_of_seven_days_of_32_byte_slots(tmp_path: Path) -> None:
    wheel = TimerWheel(str(tmp_path / "timerwheel"), SLOTS_TOTAL, 1000)
    try:
        assert (SLOTS_TOTAL, SLOT_SIZE) == (604_800, 32)
        assert (tmp_path / "timerwheel").stat().st_size == 38_707_200
        assert wheel.get_slot_index(T) == 512_000  # 1700000000 % 1209600
    finally:
        wheel.shutdown()


def test_a_slot_is_stored_as_java_puts_it(tmp_path: Path) -> None:
    path = tmp_path / "timerwheel"
    wheel = TimerWheel(str(path), SLOTS_TOTAL, 1000)
    wheel.put_slot(T, 0, 52, 2, 0)
    wheel.shutdown()
    with path.open("rb") as f:
        f.seek(512_000 * 32)
        raw = f.read(32)
    assert raw.hex() == (
        "000000006553f100"  # timeMs / precisionMs
        "0000000000000000"  # firstPos
        "0000000000000034"  # lastPos 52
        "00000002"  # num
        "00000000"  # magic
    )
    again = TimerWheel(str(path), SLOTS_TOTAL, 1000)
    try:
        assert again.get_slot(T + 999) == (T, 0, 52, 2, 0)
        assert again.get_slot(T + 1000).time_ms == -1  # another tick: empty
        assert again.get_slot(T + 2 * SLOTS_TOTAL * 1000).time_ms == -1  # another lap
        assert again.get_all_num(T - 5000) == 2
        assert again.check_phy_pos(T - 5000, 10) == 0  # lastPos 52 > 10: its firstPos
    finally:
        again.shutdown()


def test_a_slot_at_100_ms_precision_keeps_the_tick_count(tmp_path: Path) -> None:
    wheel = TimerWheel(str(tmp_path / "w"), SLOTS_TOTAL, 100)
    try:
        wheel.put_slot(T + 300, 104, 104, 1, 0)
        assert wheel.get_raw_slot(T + 300).time_ms == T + 300
        wheel.revise_slot(T + 300, -2, 156, force=False)  # IGNORE first, new last
        assert wheel.get_slot(T + 300) == (T + 300, 104, 156, 1, 0)
        wheel.revise_slot(T + 400, -2, 208, force=True)  # not this lap: forced in
        assert wheel.get_slot(T + 400) == (T + 400, 208, 208, 0, 0)
    finally:
        wheel.shutdown()


def test_a_timer_log_unit_is_52_bytes_in_java_order() -> None:
    unit = TimerLogUnit(UNIT_SIZE, -1, MAGIC_DEFAULT, T, 5000, 1234, 200, TOPIC_TEST_HASH)
    assert unit.encode().hex() == (
        "00000034"  # size 52
        "ffffffffffffffff"  # prev pos -1: first unit of its slot
        "00000001"  # MAGIC_DEFAULT
        "0000018bcfe56800"  # currWriteTimeMs
        "00001388"  # delay 5000
        "00000000000004d2"  # offsetPy 1234
        "000000c8"  # sizePy 200
        "8e987641"  # "TopicTest".hashCode()
        "0000000000000000"  # reserved
    )
    assert unit.delayed_time_ms == T + 5000


def test_the_log_closes_a_full_file_with_a_16_byte_blank(tmp_path: Path) -> None:
    size = 3 * UNIT_SIZE + 16 + 10  # room for 3 units; the 4th would leave < 16 bytes
    log = TimerLog(str(tmp_path / "timerlog"), size)
    unit = TimerLogUnit(UNIT_SIZE, -1, MAGIC_ROLL | MAGIC_DEFAULT, T, 1, 2, 3, 4).encode()
    positions = [log.append(unit) for _ in range(4)]
    assert positions == [0, 52, 104, size]  # the 4th opens the next file
    first = log.mapped_file_queue.mapped_files[0]
    blank = bytes(first.view[156:172])
    assert blank.hex() == f"{size - 156:08x}" + "00" * 8 + "cbd43194"
    assert BLANK_MAGIC_CODE == -875286124  # 0xCBD43194 as a Java int
    assert log.get_unit(size) == TimerLogUnit(UNIT_SIZE, -1, 3, T, 1, 2, 3, 4)
    assert log.offset_for_last_unit() == 104
    log.shutdown()


def test_magic_values_are_javas() -> None:
    assert (MAGIC_DEFAULT, MAGIC_ROLL, MAGIC_DELETE) == (1, 2, 4)
    assert is_magic_ok(MAGIC_DEFAULT | MAGIC_DELETE)
    assert not is_magic_ok(16)


def test_the_checkpoint_is_seven_longs_at_the_head_of_a_page(tmp_path: Path) -> None:
    path = tmp_path / "config" / "timercheck"
    cp = TimerCheckpoint(str(path))
    cp.last_read_time_ms = T
    cp.last_timer_log_flush_pos = 520
    cp.last_timer_queue_offset = 7
    cp.master_timer_queue_offset = 7
    cp.state_version, cp.timestamp, cp.counter = 0, T + 1, 3
    cp.shutdown()
    raw = path.read_bytes()
    assert len(raw) == FILE_SIZE == 4096
    assert raw[:56].hex() == (
        "0000018bcfe56800"  # lastReadTimeMs
        "0000000000000208"  # lastTimerLogFlushPos 520
        "0000000000000007"  # lastTimerQueueOffset
        "0000000000000007"  # masterTimerQueueOffset
        "0000000000000000"  # dataVersion.stateVersion
        "0000018bcfe56801"  # dataVersion.timestamp
        "0000000000000003"  # dataVersion.counter
    )
    assert raw[56:] == bytes(4040)
    again = TimerCheckpoint(str(path))
    assert (again.last_read_time_ms, again.last_timer_log_flush_pos, again.counter) == (T, 520, 3)
    again.shutdown()


@given(st.tuples(i32, i64, i32, i64, i32, i64, i32, i32, i64))
def test_a_timer_log_unit_round_trips(fields: tuple[int, ...]) -> None:
    unit = TimerLogUnit(*fields)
    encoded = unit.encode()
    assert len(encoded) == UNIT_SIZE
    assert TimerLogUnit(*TIMER_LOG_UNIT_STRUCT.unpack(encoded)) == unit


@given(st.tuples(i64, i64, i64, i64, i64, i64, i64))
def test_a_checkpoint_round_trips(fields: tuple[int, ...]) -> None:
    state = TimerCheckpointState(*fields)
    assert TimerCheckpointState.decode(state.encode()) == state
