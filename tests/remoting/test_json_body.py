"""Every JSON body of remoting.protocol round-trips, and derives its keys from its fields."""

from __future__ import annotations

import dataclasses
import enum
import importlib
import pkgutil
import types
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rocketq.remoting.protocol as protocol
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol.bodies import ConsumerData, HeartbeatData, MessageQueueData
from rocketq.remoting.protocol.consumer_bodies import ResetOffsetBody
from rocketq.remoting.protocol.custom_header import camel_case
from rocketq.remoting.protocol.json_body import JsonBody, from_json, to_json
from rocketq.remoting.protocol.subscription import EXPRESSION_TYPE_SQL92, EXPRESSION_TYPE_TAG


def _body_classes() -> list[type[JsonBody]]:
    found: dict[str, type[JsonBody]] = {}
    for info in pkgutil.iter_modules(protocol.__path__):
        module = importlib.import_module(f"{protocol.__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, JsonBody)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
            ):
                found[value.__qualname__] = value
    return [found[name] for name in sorted(found)]


BODIES = _body_classes()

# the shapes the field table of json_body does not cover, written out on purpose
HAND_WRITTEN = {(ResetOffsetBody, "from_json")}  # also reads C++'s list form

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_LONG = st.integers(-(2**63), 2**63 - 1)


def _strategy(hint: Any) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType):
        (inner,) = (a for a in args if a is not type(None))
        return st.none() | _strategy(inner)
    if origin is list:
        return st.lists(_strategy(args[0]), max_size=3)
    if origin is set:
        return st.sets(_strategy(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(_strategy(args[0]), _strategy(args[1]), max_size=3)
    if hint is bool:
        return st.booleans()
    if hint is int:
        return _LONG
    if hint is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if hint is str:
        return _TEXT
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return st.sampled_from(list(hint))
    if dataclasses.is_dataclass(hint):
        return _instances(hint)
    raise AssertionError(f"no strategy for {hint!r}")


def _instances(cls: Any) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(cls)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for f in dataclasses.fields(cls):
        strategy = _strategy(hints[f.name])
        sort = f.metadata.get("json", {}).get("sort")
        if sort:  # written sorted: generate it sorted, so the read-back compares equal
            key = None if sort is True else sort
            strategy = strategy.map(lambda v, key=key: sorted(v, key=key))
        fields[f.name] = strategy
    if cls.__name__ == "SubscriptionData":  # an empty type reads back as TAG, by design
        fields["expression_type"] = st.sampled_from([EXPRESSION_TYPE_TAG, EXPRESSION_TYPE_SQL92])
    return st.fixed_dictionaries(fields).map(lambda values: cls(**values))


def test_every_body_of_the_protocol_package_is_found() -> None:
    names = {cls.__name__ for cls in BODIES}
    assert {"HeartbeatData", "TopicRouteData", "ConsumerRunningInfo", "DataVersion"} <= names
    assert len(BODIES) >= 40


@pytest.mark.parametrize("cls", BODIES, ids=lambda c: c.__name__)
def test_no_body_writes_its_json_by_hand_beyond_the_declared_exceptions(cls: type) -> None:
    for name in ("to_json", "from_json"):
        if name in vars(cls):
            assert (cls, name) in HAND_WRITTEN, f"{cls.__name__}.{name} is hand-written"


@pytest.mark.parametrize("cls", BODIES, ids=lambda c: c.__name__)
def test_keys_are_the_camel_case_of_the_fields_unless_declared(cls: type) -> None:
    keys = set(to_json(from_json(cls, {})))
    for f in dataclasses.fields(cls):
        declared = f.metadata.get("json", {}).get("key")
        expected = declared or camel_case(f.name)
        assert expected in keys or f.default is None, (cls.__name__, f.name)


@pytest.mark.parametrize("cls", BODIES, ids=lambda c: c.__name__)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_body_round_trips_through_its_bytes(cls: type[JsonBody], data: st.DataObject) -> None:
    value = data.draw(_instances(cls))
    encoded = value.encode()
    decoded = cls.decode(encoded)
    assert decoded == value
    assert decoded.encode() == encoded


@settings(max_examples=50, deadline=None)
@given(value=_instances(TopicConfig))
def test_a_plain_dataclass_round_trips_through_to_json_and_from_json(value: TopicConfig) -> None:
    assert from_json(TopicConfig, to_json(value)) == value


def test_missing_keys_take_the_defaults_and_a_nested_body_its_zero() -> None:
    consumer = ConsumerData.from_json({})
    assert consumer == ConsumerData(group_name="")
    assert HeartbeatData.from_json({"consumerDataSet": [None]}).consumer_data_set == [consumer]


def test_a_field_that_does_not_parse_names_its_key() -> None:
    with pytest.raises(RemotingCommandError, match="queueId"):
        MessageQueueData.from_json({"topic": "T", "brokerName": "b", "queueId": "x"})
    with pytest.raises(RemotingCommandError, match="consumeType"):
        ConsumerData.from_json({"groupName": "g", "consumeType": "SOMETIMES"})


@pytest.mark.parametrize("cls", BODIES, ids=lambda c: c.__name__)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_to_json_gives_the_keys_in_fastjson_s_sorted_order(
    cls: type[JsonBody], data: st.DataObject
) -> None:
    # callers dump to_json() unsorted too (the ACL YAML, GET_BROKER_CONFIG's version header)
    keys = list(data.draw(_instances(cls)).to_json())
    if getattr(cls, "json_in_field_order", False):
        fields = [
            f.metadata.get("json", {}).get("key") or camel_case(f.name)
            for f in dataclasses.fields(cls)
        ]
        assert keys == [k for k in fields if k in keys]
    else:
        assert keys == sorted(keys)
