"""Golden bytes of the autoswitch HA frames, laid out as RocketMQ 5's AutoSwitchHAClient and
AutoSwitchHAConnection write them, and round trips through the sans-IO decoders."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.store.ha.autoswitch_frames import (
    MASTER_HANDSHAKE_SIZE,
    MASTER_TRANSFER_SIZE,
    SLAVE_ACK_SIZE,
    SLAVE_HANDSHAKE_SIZE,
    HAConnectionState,
    MasterFrameDecoder,
    MasterHandshake,
    MasterTransfer,
    SlaveAck,
    SlaveFrameDecoder,
    SlaveHandshake,
    encode_master_handshake,
    encode_master_transfer_header,
    encode_slave_ack,
    encode_slave_handshake,
)
from rocketq.store.ha.epoch_file import EpochEntry
from rocketq.store.ha.frames import HAProtocolError

FAR = 1 << 40  # an offset far past 2^31: nothing may overflow or be compared by subtraction


def test_sizes_are_rocketmqs() -> None:
    # AutoSwitchHAClient: HANDSHAKE_HEADER_SIZE = 4 + 4 + 8, TRANSFER_HEADER_SIZE = 4 + 8;
    # AutoSwitchHAConnection: HANDSHAKE_HEADER_SIZE = 4 + 4 + 8 + 4, TRANSFER_HEADER_SIZE + 16
    assert (SLAVE_HANDSHAKE_SIZE, SLAVE_ACK_SIZE) == (16, 12)
    assert (MASTER_HANDSHAKE_SIZE, MASTER_TRANSFER_SIZE) == (20, 36)
    assert [s.value for s in HAConnectionState] == [0, 1, 2, 3, 4]


def test_slave_handshake_golden_bytes() -> None:
    frame = encode_slave_handshake(SlaveHandshake(2, sync_from_last_file=False, async_learner=True))
    assert frame.hex() == "00000001000000010000000000000002"


def test_slave_ack_golden_bytes() -> None:
    assert encode_slave_ack(FAR).hex() == "000000020000010000000000"


def test_master_handshake_golden_bytes() -> None:
    frame = encode_master_handshake(8000, 8, [EpochEntry(7, 7000), EpochEntry(8, 8000)])
    assert frame.hex() == (
        "00000001"
        "00000018"
        "0000000000001f40"
        "00000008"  # state, 24-byte body, max, epoch
        "00000007"
        "0000000000001b58"  # <7, 7000>
        "00000008"
        "0000000000001f40"  # <8, 8000>
    )


def test_master_transfer_golden_bytes() -> None:
    frame = encode_master_transfer_header(FAR, 3, 9, FAR - 100, FAR - 1) + b"abc"
    assert frame.hex() == (
        "00000002"
        "00000003"
        "0000010000000000"  # state, body size, offset
        "00000009"
        "000000ffffffff9c"
        "000000ffffffffff"  # epoch, epoch start, confirm
        "616263"
    )


def test_slave_decoder_takes_handshake_then_acks_in_any_pieces() -> None:
    stream = encode_slave_handshake(SlaveHandshake(3, True, False)) + encode_slave_ack(FAR)
    decoder = SlaveFrameDecoder()
    got = [f for b in stream for f in decoder.feed(bytes([b]))]
    assert got == [SlaveHandshake(3, True, False), SlaveAck(FAR)]


def test_master_decoder_takes_handshake_then_transfers_in_any_pieces() -> None:
    entries = (EpochEntry(1, 0), EpochEntry(2, FAR))
    stream = (
        encode_master_handshake(FAR + 5, 2, entries)
        + encode_master_transfer_header(FAR, 2, 2, FAR, FAR)
        + b"xy"
        + encode_master_transfer_header(FAR + 2, 0, 2, FAR, FAR + 2)
    )
    decoder = MasterFrameDecoder(1024)
    got = [f for i in range(0, len(stream), 7) for f in decoder.feed(stream[i : i + 7])]
    assert got == [
        MasterHandshake(FAR + 5, 2, entries),
        MasterTransfer(FAR, 2, FAR, FAR, b"xy"),
        MasterTransfer(FAR + 2, 2, FAR, FAR + 2, b""),
    ]


@pytest.mark.parametrize("state", [0, 3, 4, 9])
def test_decoders_refuse_a_state_they_never_take(state: int) -> None:
    with pytest.raises(HAProtocolError):
        SlaveFrameDecoder().feed(state.to_bytes(4, "big") + bytes(12))
    with pytest.raises(HAProtocolError):
        MasterFrameDecoder(1024).feed(state.to_bytes(4, "big") + bytes(32))


def test_master_decoder_refuses_bad_sizes() -> None:
    with pytest.raises(HAProtocolError, match="body size"):
        MasterFrameDecoder(1024).feed(
            encode_master_handshake(0, 1, [])[:4] + b"\0\0\0\x05" + bytes(12)
        )
    with pytest.raises(HAProtocolError, match="transfer header"):
        MasterFrameDecoder(1024).feed(encode_master_transfer_header(0, 2048, 1, 0, 0))


def test_slave_decoder_refuses_a_negative_ack() -> None:
    with pytest.raises(HAProtocolError, match="negative"):
        SlaveFrameDecoder().feed(encode_slave_ack(-1))


offsets = st.integers(0, (1 << 63) - 1)
epochs = st.integers(0, (1 << 31) - 1)


@given(offsets, epochs, offsets, offsets, st.binary(max_size=64))
def test_transfer_round_trips(
    offset: int, epoch: int, start: int, confirm: int, data: bytes
) -> None:
    frame = encode_master_transfer_header(offset, len(data), epoch, start, confirm) + data
    assert MasterFrameDecoder(64).feed(frame) == [
        MasterTransfer(offset, epoch, start, confirm, data)
    ]


@given(offsets, epochs, st.lists(st.tuples(epochs, offsets), max_size=20))
def test_handshake_round_trips(max_offset: int, epoch: int, raw: list[tuple[int, int]]) -> None:
    entries = tuple(EpochEntry(e, s) for e, s in raw)
    frame = encode_master_handshake(max_offset, epoch, entries)
    assert MasterFrameDecoder(0).feed(frame) == [MasterHandshake(max_offset, epoch, entries)]


@given(st.integers(0, (1 << 63) - 1), st.booleans(), st.booleans(), offsets)
def test_slave_frames_round_trip(broker_id: int, last: bool, learner: bool, ack: int) -> None:
    stream = encode_slave_handshake(SlaveHandshake(broker_id, last, learner)) + encode_slave_ack(
        ack
    )
    assert SlaveFrameDecoder().feed(stream) == [
        SlaveHandshake(broker_id, last, learner),
        SlaveAck(ack),
    ]
