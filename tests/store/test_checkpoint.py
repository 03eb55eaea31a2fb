"""StoreCheckpoint: the 4096-byte page."""

from __future__ import annotations

import struct
from pathlib import Path

from rocketq.store.checkpoint import StoreCheckpoint


def test_missing_checkpoint_reads_as_zeros_and_is_created_on_flush(tmp_path: Path) -> None:
    cp = StoreCheckpoint(str(tmp_path / "checkpoint"))
    assert (cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp) == (0, 0, 0)
    assert not (tmp_path / "checkpoint").exists()
    cp.shutdown()
    assert (tmp_path / "checkpoint").read_bytes() == bytes(4096)


def test_flushed_fields_sit_at_their_offsets_and_survive_reopen(tmp_path: Path) -> None:
    cp = StoreCheckpoint(str(tmp_path / "checkpoint"))
    cp.physic_msg_timestamp = 1700000012077
    cp.logics_msg_timestamp = 1700000005050
    cp.index_msg_timestamp = 1700000000123
    cp.confirm_phy_offset = 698
    cp.shutdown()
    data = (tmp_path / "checkpoint").read_bytes()
    assert len(data) == 4096
    assert struct.unpack_from(">qqqqq", data) == (
        1700000012077,
        1700000005050,
        1700000000123,
        0,
        698,
    )
    assert data[40:] == bytes(4056)
    again = StoreCheckpoint(str(tmp_path / "checkpoint"))
    assert again.logics_msg_timestamp == 1700000005050
    assert again.confirm_phy_offset == 698


def test_a_4x_checkpoint_of_24_meaningful_bytes_reads(tmp_path: Path) -> None:
    (tmp_path / "checkpoint").write_bytes(struct.pack(">qqq", 5, 6, 7))
    cp = StoreCheckpoint(str(tmp_path / "checkpoint"))
    assert (cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp) == (5, 6, 7)
    assert cp.confirm_phy_offset == 0


def test_min_timestamps_follow_rocketmq(tmp_path: Path) -> None:
    cp = StoreCheckpoint(str(tmp_path / "checkpoint"))
    cp.physic_msg_timestamp = 10_000
    cp.logics_msg_timestamp = 8_000
    cp.index_msg_timestamp = 4_000
    assert cp.get_min_timestamp() == 5_000
    assert cp.get_min_timestamp_index() == 4_000
    cp.logics_msg_timestamp = 1_000
    assert cp.get_min_timestamp() == 0
