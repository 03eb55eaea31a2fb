"""HeapFreezer: long-lived tables leave the cyclic collector's walk after a growth step, and
the cyclic garbage a freeze caught is freed by the next reclaim."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.broker.config import BrokerConfig
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.heap_freeze import HEAP, HeapFreezer
from rocketq.common.topic_config import TopicConfig
from rocketq.namesrv.route_info import RouteInfoManager
from rocketq.remoting.protocol.data_version import DataVersion


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def tracked(obj: object) -> bool:
    """Whether a collection of the generations would walk ``obj`` (frozen objects are in
    none of them)."""
    return any(o is obj for o in gc.get_objects())


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    HEAP.disable()
    gc.unfreeze()  # the test process's heap goes back to the collected generations


@pytest.mark.usefixtures("unfrozen")
def test_a_growth_step_freezes_the_table_and_later_objects_stay_collected() -> None:
    freezer = HeapFreezer(freeze_growth=100)
    freezer.enable()
    table = {f"T{i}": Node() for i in range(150)}
    freezer.grown(99)
    freezer.settle()
    assert freezer.freezes == 0
    assert tracked(table["T7"])
    freezer.grown(1)
    freezer.settle()
    assert freezer.freezes == 1
    assert gc.get_freeze_count() > len(table)
    assert not tracked(table["T7"])
    assert not tracked(table["T149"])
    later = Node()
    freezer.grown(99)  # the count starts again after a freeze
    freezer.settle()
    assert freezer.freezes == 1
    assert tracked(later)


@pytest.mark.usefixtures("unfrozen")
def test_a_freezer_not_enabled_freezes_nothing() -> None:
    freezer = HeapFreezer(freeze_growth=1)
    freezer.grown(10)
    freezer.settle()
    freezer.enable()
    freezer.disable()
    freezer.grown(10)
    freezer.settle()
    assert freezer.freezes == 0
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize(("reclaim_ratio", "freed"), [(2, True), (0, False)])
@pytest.mark.usefixtures("unfrozen")
def test_cyclic_garbage_frozen_alive_is_freed_once_the_frozen_heap_doubled(
    reclaim_ratio: int, freed: bool
) -> None:
    freezer = HeapFreezer(freeze_growth=1, reclaim_ratio=reclaim_ratio)
    gc.collect()
    gc.freeze()  # the start-up heap
    freezer.enable()
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the cyclic collector frees it
    gone = weakref.ref(a)
    freezer.grown(1)
    freezer.settle()  # frozen while alive
    del a, b  # now cyclic garbage among frozen objects
    gc.collect()
    assert gone() is not None  # a collection does not walk frozen objects
    assert freezer.reclaims == 0
    grown = [Node() for _ in range(gc.get_freeze_count())]  # the frozen heap doubles
    freezer.grown(len(grown))
    freezer.settle()
    assert (gone() is None) is freed
    assert freezer.reclaims == (1 if freed else 0)
    assert not tracked(grown[0])


@pytest.mark.usefixtures("unfrozen")
def test_a_batch_create_of_a_growth_step_freezes_the_broker_topic_table(tmp_path: Path) -> None:
    HEAP.enable()
    manager = TopicConfigManager(BrokerConfig(), tmp_path)
    manager.update_topic_config_list(
        TopicConfig(topic_name=f"Grow{i}", read_queue_nums=8, write_queue_nums=8)
        for i in range(HEAP.freeze_growth - 1)
    )
    assert tracked(manager.select_topic_config("Grow7"))
    manager.update_topic_config(TopicConfig(topic_name="Last"))  # the step reached
    assert not tracked(manager.select_topic_config("Grow7"))
    assert not tracked(manager.select_topic_config("Last"))
    manager.update_topic_config(TopicConfig(topic_name="After"))
    assert tracked(manager.select_topic_config("After"))
    manager.wait_for_compaction()


@pytest.mark.usefixtures("unfrozen")
def test_a_registration_of_a_growth_step_freezes_the_name_server_route_table() -> None:
    HEAP.enable()
    routes = RouteInfoManager()
    configs = {
        f"Grow{i}": TopicConfig(topic_name=f"Grow{i}", read_queue_nums=8, write_queue_nums=8)
        for i in range(HEAP.freeze_growth)
    }
    routes.register_broker(
        cluster_name="c",
        broker_addr="127.0.0.1:1",
        broker_name="b",
        broker_id=0,
        ha_server_addr="127.0.0.1:2",
        topic_config_table=configs,
        data_version=DataVersion(),
    )
    assert not tracked(routes.topic_queue_table["Grow7"]["b"])
    assert not tracked(routes.topic_queue_table["Grow7"])
