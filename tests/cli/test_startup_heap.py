"""freeze_start_up_heap: a server command's start-up objects leave the collected generations."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from rocketq.cli.startup import GC_FREEZE_ENV, freeze_start_up_heap


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the test process's heap goes back to the collected generations


@pytest.mark.usefixtures("unfrozen")
def test_start_up_objects_move_to_the_permanent_generation_and_a_full_collection_skips_them() -> (
    None
):
    table = {f"topic-{i}": [i] for i in range(1000)}  # a start-up table that lives on
    freeze_start_up_heap()
    assert gc.get_freeze_count() > len(table)
    assert all(o is not table for o in gc.get_objects())  # no generation lists it


@pytest.mark.usefixtures("unfrozen")
def test_rocketq_gc_freeze_0_leaves_the_heap_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GC_FREEZE_ENV, "0")
    freeze_start_up_heap()
    assert gc.get_freeze_count() == 0
