"""The timer's recovery steps (TimerMessageStore.recoverAndRevise and reviseQueueOffset).

``recover_and_revise`` walks the timerlog from the file holding a position, re-points each
unit's wheel slot at it (the wheel may have missed the last appends) and, when checking,
cuts the log at the first unit that is not one: a size other than 52 or a magic outside
0x1..0xF (a zero-filled tail included). ``revise_queue_offset`` finds the wheel-topic queue
offset of the last unit's message, where the enqueue resumes (+ 1).
"""

from __future__ import annotations

from rocketq.common.message_decoder import decode_message
from rocketq.errors import DecodeError
from rocketq.store.timer.store_host import StoreHost
from rocketq.store.timer.timer_log import (
    BLANK_MAGIC_CODE,
    TIMER_LOG_UNIT_STRUCT,
    UNIT_SIZE,
    TimerLog,
    TimerLogUnit,
    is_magic_ok,
)
from rocketq.store.timer.timer_wheel import IGNORE, TimerWheel

REVISE_SEARCH_UNITS = 20_000  # how far back reviseQueueOffset looks for the unit's message


def recover_and_revise(
    timer_log: TimerLog, wheel: TimerWheel, begin_offset: int, *, check_timer_log: bool
) -> int:
    """The end of the valid units from the file holding ``begin_offset`` on."""
    files = timer_log.files_from(begin_offset)
    if not files:
        return 0
    check_offset = files[0].file_from_offset
    for mf in files:
        end = timer_log.file_size if check_timer_log else mf.wrote_position
        position, stop = _revise_file(wheel, mf.view, mf.file_from_offset, end, check_timer_log)
        check_offset = mf.file_from_offset + position
        if stop:
            break
    if check_timer_log:
        timer_log.truncate(check_offset)
    return check_offset


def _revise_file(
    wheel: TimerWheel, view: memoryview, file_from: int, end: int, check: bool
) -> tuple[int, bool]:
    """(where the file's units end, whether a bad unit ended them)."""
    position = 0
    while position + UNIT_SIZE <= end:
        unit = TimerLogUnit(*TIMER_LOG_UNIT_STRUCT.unpack_from(view, position))
        if unit.magic == BLANK_MAGIC_CODE:
            return position, False
        ok = unit.size == UNIT_SIZE and is_magic_ok(unit.magic) and unit.magic != 0
        if check and not ok:
            return position, True
        if ok:
            wheel.revise_slot(unit.delayed_time_ms, IGNORE, file_from + position, force=True)
        position += UNIT_SIZE
    return position, False


def revise_queue_offset(timer_log: TimerLog, store: StoreHost, process_offset: int) -> int:
    """The wheel-topic queue offset of the message of the unit ending at ``process_offset``
    (checked against the consume queue), or -1 when there is none."""
    if process_offset < UNIT_SIZE:
        return -1
    unit = timer_log.get_unit(process_offset - UNIT_SIZE)
    if unit is None or unit.size != UNIT_SIZE:
        return -1
    data = store.select_one_message_by_offset(unit.offset_py, unit.size_py)
    try:
        msg = decode_message(data, check_crc=False, read_body=False) if data else None
    except DecodeError:
        msg = None
    if msg is None:
        return -1
    cq = store.find_consume_queue(msg.topic, msg.queue_id, create=False)
    if cq is None:
        return msg.queue_offset
    offset = msg.queue_offset
    for _ in range(REVISE_SEARCH_UNITS):
        if offset < 0:
            break
        cq_unit = cq.get_unit(offset)
        if cq_unit is not None and (cq_unit[0], cq_unit[1]) == (unit.offset_py, unit.size_py):
            return offset
        offset -= 1
    return msg.queue_offset
