"""The slave's metadata round logs the offsets it took (DEBUG), each as ``key q: old->new``,
only those that moved: the evidence for what a change of master replays."""

from __future__ import annotations

from rocketq.broker.slave_sync import offset_changes


def test_offset_changes_name_only_the_offsets_that_moved() -> None:
    before = {"offsetTable": {"T@G": {0: 5, 1: 7}, "T@Old": {0: 1}}}
    after = {"offsetTable": {"T@G": {0: 9, 1: 7, 2: 3}, "T@Old": {0: 1}}}
    assert offset_changes(before, after) == "T@G q0: 5->9; T@G q2: None->3"
    assert offset_changes(after, after) == ""
