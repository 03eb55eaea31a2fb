"""The C header reader (``header_from_fields``) against ``CommandCustomHeader.parse_ext_fields``:
every header class, its table built from its declarations, the same header or the same error."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.remoting import native_frames
from rocketq.remoting.protocol import controller_headers, headers, pop_headers
from rocketq.remoting.protocol.custom_header import CommandCustomHeader
from rocketq.remoting.protocol.headers import SendMessageRequestHeader, SendMessageRequestHeaderV2
from rocketq.testing.record_paths import outcome

pytestmark = pytest.mark.skipif(native_frames.COMPILED is None, reason="extension not built")

MODULES = (headers, pop_headers, controller_headers)


def header_classes() -> list[type[CommandCustomHeader]]:
    found = {
        obj
        for module in MODULES
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, CommandCustomHeader)
        and dataclasses.is_dataclass(obj)
    }
    return sorted(found, key=lambda c: c.__qualname__)


CLASSES = header_classes()
VALUES = st.sampled_from(
    ["", "0", "7", "-3", "+5", "007", "12345678901234567890", "1.5", " 1", "\u0661", "x",
     "true", "false", "True", " true ", "1", "TRUE", "\ud800", "topic", "%RETRY%g"]
)  # fmt: skip


@pytest.fixture(autouse=True)
def _restore_path() -> Iterator[None]:
    before = native_frames.FRAMES
    yield
    native_frames.use(before is not None)


def both(fn: object) -> tuple[object, object]:
    native_frames.use(False)
    python = outcome(fn)  # type: ignore[arg-type]
    native_frames.use(True)
    compiled = outcome(fn)  # type: ignore[arg-type]
    return python, compiled


def test_every_header_class_has_a_table_naming_each_declared_field_once() -> None:
    assert len(CLASSES) > 50
    tabled = 0
    for cls in CLASSES:
        table = cls.native_table()
        if table is None:
            continue
        tabled += 1
        declared = [(s.attr, s.wire, s.required) for s in cls._field_specs()]
        assert [(attr, w, req) for attr, w, _, req, _ in table] == declared, cls
    assert tabled >= len(CLASSES) * 3 // 4  # the few with float (or other) fields stay Python


GOOD = {
    str: ["topic", "", "%RETRY%g"],
    int: ["0", "7", "-3", "+5", "007"],
    bool: ["true", "false", "1", "0", ""],
}
TRICKY = ["12345678901234567890", "1.5", " 1", "\u0661", "x", "True", " true ", "\ud800"]


def sample_fields(rng: random.Random, cls: type[CommandCustomHeader]) -> dict[str, str]:
    """Mostly well-formed values of each field's kind, some tricky or missing."""
    fields = {}
    for spec in cls._field_specs():
        roll = rng.random()
        if roll < 0.1:
            continue
        pool = TRICKY if roll > 0.9 else GOOD.get(spec.kind, TRICKY)
        fields[spec.wire] = rng.choice(pool)
    return fields


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__qualname__)
def test_any_ext_fields_give_the_same_header_or_error_on_both_paths(
    cls: type[CommandCustomHeader],
) -> None:
    rng = random.Random(cls.__qualname__)
    for _ in range(40):
        fields = sample_fields(rng, cls)
        python, compiled = both(lambda: cls.from_ext_fields(fields))  # noqa: B023
        assert python == compiled, fields


@given(fields=st.dictionaries(st.sampled_from([*"abcdefghijklmn", "x"]), VALUES))
def test_send_message_v2_reads_as_v1_alike_on_both_paths(fields: dict[str, str]) -> None:
    python, compiled = both(lambda: SendMessageRequestHeaderV2.decode_as_v1(fields))
    assert python == compiled


def test_a_v2_send_header_read_in_c_equals_the_v1_header_it_encodes() -> None:
    v1 = SendMessageRequestHeader(
        producer_group="PG", topic="T", default_topic="TBW102", default_topic_queue_nums=4,
        queue_id=2, sys_flag=0, born_timestamp=1_700_000_000_000, flag=0,
        properties="TAGS\x01t\x02", reconsume_times=1, batch=True, max_reconsume_times=16,
    )  # fmt: skip
    native_frames.use(True)
    header = SendMessageRequestHeader.read_native(
        v1.to_v2().to_ext_fields(), SendMessageRequestHeader.native_table(headers._V1_WIRES_OF_V2)
    )
    assert header == v1
