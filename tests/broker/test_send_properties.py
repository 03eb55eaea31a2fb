"""The producer's properties string passed through to the record (send_properties)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketq.broker.send_properties import pass_through
from rocketq.common.properties import decode_properties, encode_properties

CLUSTER = "DefaultCluster"

_text = st.text(
    alphabet=st.characters(blacklist_characters="\x01\x02", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=12,
)
_names = _text.filter(lambda n: n not in ("DELAY", "TRAN_MSG", "CLUSTER"))


def map_path(text: str) -> tuple[bytes, bool]:
    """What the broker's decode, edit and encode path stores (send.py's slow path)."""
    props = decode_properties(text.encode())
    wait = props.pop("WAIT", "true") != "false"
    props["CLUSTER"] = CLUSTER
    return encode_properties(props), wait


@given(st.dictionaries(_names, _text, max_size=8), st.sampled_from([None, "true", "false"]))
def test_a_well_formed_string_passes_through_byte_for_byte_as_the_map_path(
    props: dict[str, str], wait: str | None
) -> None:
    if wait is not None:
        props = {**props, "WAIT": wait}
    text = encode_properties(props).decode()
    passed = pass_through(text, CLUSTER)
    if passed is None:  # a name ending in a rule's name ("XWAIT") takes the map path
        rules = ("WAIT", "DELAY", "TRAN_MSG", "CLUSTER")
        assert any(n.endswith(r) and n != r for n in props for r in rules)
        return
    assert passed == map_path(text)


def test_a_string_without_the_final_separator_reads_the_same() -> None:
    passed = pass_through("TAGS\x01a\x02KEYS\x01k", CLUSTER)
    assert passed is not None
    record, wait = passed
    assert wait is True
    assert decode_properties(record) == {"TAGS": "a", "KEYS": "k", "CLUSTER": CLUSTER}


def test_wait_false_is_read_and_not_stored() -> None:
    passed = pass_through("WAIT\x01false\x02TAGS\x01a\x02", CLUSTER)
    assert passed == (f"TAGS\x01a\x02CLUSTER\x01{CLUSTER}\x02".encode(), False)
    passed = pass_through("TAGS\x01a\x02WAIT\x01false", CLUSTER)
    assert passed == (f"TAGS\x01a\x02CLUSTER\x01{CLUSTER}\x02".encode(), False)


def test_an_empty_string_gets_only_the_cluster() -> None:
    assert pass_through("", CLUSTER) == (f"CLUSTER\x01{CLUSTER}\x02".encode(), True)


def test_properties_a_broker_rule_reads_take_the_map_path() -> None:
    assert pass_through("DELAY\x013\x02", CLUSTER) is None
    assert pass_through("TRAN_MSG\x01true\x02", CLUSTER) is None
    assert pass_through("CLUSTER\x01other\x02", CLUSTER) is None
    assert pass_through("WAIT\x01false\x02WAIT\x01true\x02", CLUSTER) is None
    assert pass_through("MYWAIT\x01false\x02", CLUSTER) is None
