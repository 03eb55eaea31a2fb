"""Hypothesis strategies for round trips: whole messages with every field a record carries.

``messages()`` draws a MessageExt whose topic, body, properties, ints and IPv4/IPv6 hosts
cover what the commit log record (``MessageDecoder.encode`` in RocketMQ's common module)
can hold: property text without the 0x01/0x02 separators, 32- and 64-bit ints, sys flags.
"""

from __future__ import annotations

import ipaddress

from hypothesis import strategies as st

from rocketq.common.message import MessageExt

_chars = st.characters(exclude_characters="\x01\x02", exclude_categories=["Cs"])
_ipv4 = st.ip_addresses(v=4).map(str)
# Not IPv4-mapped: those are written as 4-byte IPv4 hosts on purpose (host_to_bytes).
_ipv6 = (
    st.ip_addresses(v=6)
    .filter(lambda a: isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is None)
    .map(lambda a: str(ipaddress.IPv6Address(a)))
)
_hosts = st.tuples(st.one_of(_ipv4, _ipv6), st.integers(0, 65535))
_int32 = st.integers(-(1 << 31), (1 << 31) - 1)
_int64 = st.integers(-(1 << 63), (1 << 63) - 1)
_topic = st.text(
    st.characters(whitelist_categories=("Lu", "Ll", "Nd"), max_codepoint=0x7FF), min_size=1
)


@st.composite
def messages(draw: st.DrawFn, topic: st.SearchStrategy[str] = _topic) -> MessageExt:
    return MessageExt(
        topic=draw(topic.filter(lambda t: len(t.encode()) <= 300)),
        body=draw(st.binary(max_size=2000)),
        flag=draw(_int32),
        properties=draw(
            st.dictionaries(
                st.text(_chars, min_size=1, max_size=16),
                st.text(_chars, min_size=1, max_size=40),
                max_size=8,
            )
        ),
        queue_id=draw(_int32),
        queue_offset=draw(_int64),
        sys_flag=draw(st.sampled_from([0, 0x1, 0x4, 0x8, 0xC, 0x80])),
        born_timestamp=draw(_int64),
        born_host=draw(_hosts),
        store_timestamp=draw(_int64),
        store_host=draw(_hosts),
        commitlog_offset=draw(_int64),
        reconsume_times=draw(_int32),
        prepared_transaction_offset=draw(_int64),
    )
