"""TopicsJsonText: the text of ``topics.json`` joined from per-topic parts encoded once.

``topics.json`` is RocketMQ's TopicConfigSerializeWrapper as fastjson pretty-prints it
(``fastjson.dumps_pretty``: tabs, keys in order). Encoding the whole table at each compaction
costs seconds of Python at 100,000 topics (0.7 s to dicts, 5.6 s to text here), and a thread
that busy holds the GIL in 5 ms turns: a create answered meanwhile waited for it many times
(p50 0.9 ms idle, 12 ms during a compaction, in-process). So each topic's part is encoded
when the topic changes (the change's own request pays ~0.1 ms), kept with the config it was
encoded from, and a compaction only joins the parts in name order: the order is kept sorted
across compactions (new names inserted, gone ones dropped), so no compaction sorts the table
in one GIL-holding call either; the join lets the GIL go every ``YIELD_EVERY`` parts, so a
create on the event loop waits for a compaction's Python for well under the interpreter's 5 ms
switch interval. The text is the same as ``dumps_pretty`` of the wrapper's JSON
(tests/broker/test_topic_config_text.py).
"""

from __future__ import annotations

import bisect
import json
import time
from typing import Any

from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.fastjson import dumps_pretty
from rocketq.remoting.protocol.json_body import to_json
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper

#: the table's key in the wrapper's text, as ``dumps_pretty`` writes an empty table
EMPTY_TABLE = '"topicConfigTable":{}'
#: beyond this share of new names, one sort costs less than inserting each
RESORT_SHARE = 8
#: parts joined between two releases of the GIL (``time.sleep(0)``): ~0.3 ms of Python
YIELD_EVERY = 1024


def encode_part(name: str, obj: dict[str, Any]) -> str:
    """One entry of the table, at the wrapper's nesting (two tabs), without the separator."""
    return f"\t\t{json.dumps(name, ensure_ascii=False)}:{dumps_pretty(obj, 2)}"


class TopicsJsonText:
    """Parts by topic name; ``put``/``drop`` from any thread, ``render`` from one at a time
    (the compaction, under ConfigManager's file lock)."""

    def __init__(self) -> None:
        # the part of each name, and the config it was encoded from; two maps, not one of
        # (config, text) pairs: a pair is one more object per topic for the cyclic
        # collector to walk (rocketq.common.heap_freeze)
        self._parts: dict[str, str] = {}
        self._sources: dict[str, TopicConfig] = {}
        self._order: list[str] = []

    def put(self, tc: TopicConfig, obj: dict[str, Any]) -> None:
        """``tc`` was stored; ``obj`` is its JSON (``to_json(tc)``)."""
        name = tc.topic_name
        text = encode_part(name, obj)
        self._sources[name] = tc  # the source first, the text last: see render
        self._parts[name] = text

    def drop(self, name: str) -> None:
        self._sources.pop(name, None)
        self._parts.pop(name, None)

    def render(self, table: dict[str, TopicConfig], version: DataVersion) -> str:
        """The file's text for a snapshot ``table`` (not changed while this runs)."""
        head = dumps_pretty(TopicConfigSerializeWrapper(data_version=version).to_json())
        if not table:
            return head
        self._update_order(table)
        parts, sources = self._parts, self._sources
        out: list[str] = []
        for i, name in enumerate(self._order):
            if i % YIELD_EVERY == YIELD_EVERY - 1:
                time.sleep(0)  # the event loop's turn (a create waiting for the GIL)
            tc = table[name]
            if sources.get(name) is not tc:  # stored without a put (load, system)
                # the text first, the source last (a put does the reverse), so a source
                # is never left beside an older text: a put racing this leaves either its
                # text with its source or an older source, which the next render redoes
                parts[name] = encode_part(name, to_json(tc))
                sources[name] = tc
            out.append(parts[name])
        body = '"topicConfigTable":{\n' + ",\n".join(out) + "\n\t}"
        return head.replace(EMPTY_TABLE, body, 1)

    def _update_order(self, table: dict[str, TopicConfig]) -> None:
        known = set(self._order)
        new = [name for name in table if name not in known]
        if len(known) != len(table) - len(new):  # names gone since the last render
            self._order = [name for name in self._order if name in table]
        if len(new) * RESORT_SHARE > len(table):
            self._order.extend(new)
            self._order.sort()
        else:
            for name in new:
                bisect.insort(self._order, name)
