"""TopicsJsonText: the text of ``topics.json`` joined from per-topic parts encoded once.

``topics.json`` is RocketMQ's TopicConfigSerializeWrapper as fastjson pretty-prints it
(``fastjson.dumps_pretty``: tabs, keys in order). Encoding the whole table at each compaction
costs seconds of Python at 100,000 topics (0.7 s to dicts, 5.6 s to text here), and a thread
that busy holds the GIL in 5 ms turns: a create answered meanwhile waited for it many times
(p50 0.9 ms idle, 12 ms during a compaction, in-process). So each topic's part is encoded
when the topic changes (the change's own request pays ~0.1 ms), kept with the config it was
encoded from, and a compaction only joins the parts in name order.

No step of a compaction is one call over the whole table either: at 100,000 topics (18 MB
of text) a copy of the table, a set of its names, a sort, a join of the parts, the text's
``replace`` into the head or its encoding each held the GIL for 8-28 ms on a loaded machine,
and a create on the event loop waited for the whole call (BENCHMARKS.md, issue 22: the
compaction). So the render reads the live table (no snapshot: see ``chunks``), learns the
names to add from the puts since the last render (``cut``, not a scan of the table), keeps
the name order across renders by merging the new names in (sorted a slice at a time), and
yields the text in pieces of ``YIELD_EVERY`` parts that the writer encodes and writes one by
one; between two pieces the thread lets the GIL go (``pause``), so the event loop waits for
a compaction's Python for a piece's time (~0.2 ms), not the interpreter's 5 ms switch
interval. The text is the same as ``dumps_pretty`` of the wrapper's JSON
(tests/broker/test_topic_config_text.py).
"""

from __future__ import annotations

import heapq
import itertools
import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.fastjson import dumps_pretty
from rocketq.remoting.protocol.json_body import to_json
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper

#: the table's key in the wrapper's text, as ``dumps_pretty`` writes an empty table
EMPTY_TABLE = '"topicConfigTable":{}'
#: names (merged, or parts joined) between two releases of the GIL: ~0.1-0.3 ms of Python
YIELD_EVERY = 512
#: parts encoded by a render (names stored without a put) between two releases of the GIL
ENCODE_EVERY = 16
#: how long a pause lets the GIL go: ``sleep(0)`` often takes it straight back before a
#: waiting thread runs, which then waits for the switch interval; a real sleep hands it over
PAUSE_S = 0.00005


def pause() -> None:
    """The event loop's turn (a create waiting for the GIL)."""
    time.sleep(PAUSE_S)


def encode_part(name: str, obj: dict[str, Any]) -> str:
    """One entry of the table, at the wrapper's nesting (two tabs), without the separator."""
    return f"\t\t{json.dumps(name, ensure_ascii=False)}:{dumps_pretty(obj, 2)}"


class TopicsJsonText:
    """Parts by topic name. ``put``/``known``/``drop``/``cut`` under the table's lock (any
    thread); ``chunks`` from one thread at a time (the compaction, under ConfigManager's file
    lock) while the table changes."""

    def __init__(self) -> None:
        # the part of each name, and the config it was encoded from (None: not encoded yet);
        # two maps, not one of (config, text) pairs: a pair is one more object per topic for
        # the cyclic collector to walk (rocketq.common.heap_freeze)
        self._parts: dict[str, str] = {}
        self._sources: dict[str, TopicConfig | None] = {}
        self._order: list[str] = []  # the names as of the last render, sorted
        self._fresh: list[str] = []  # names new to this object since the last cut

    def put(self, tc: TopicConfig, obj: dict[str, Any]) -> None:
        """``tc`` was stored; ``obj`` is its JSON (``to_json(tc)``)."""
        name = tc.topic_name
        text = encode_part(name, obj)
        if name not in self._sources:
            self._fresh.append(name)
        self._sources[name] = tc  # the source first, the text last: see chunks
        self._parts[name] = text

    def known(self, name: str) -> None:
        """``name`` was stored without a put (loaded, system): encoded by the next render."""
        if name not in self._sources:
            self._fresh.append(name)
            self._sources[name] = None

    def drop(self, name: str) -> None:
        self._sources.pop(name, None)
        self._parts.pop(name, None)

    def cut(self, table: Mapping[str, TopicConfig]) -> tuple[list[str], bool]:
        """Under the table's lock, when the version to write is taken: the names new since
        the last cut, and whether every stored name is known here (False once the table was
        changed without ``put``/``known``/``drop``: the next render scans it once)."""
        fresh, self._fresh = self._fresh, []
        return fresh, len(self._sources) == len(table)

    def render(self, table: Mapping[str, TopicConfig], version: DataVersion) -> str:
        """The file's text for ``table`` (not changed while this runs)."""
        return "".join(self.chunks(table, version, self.cut(table)))

    def chunks(
        self,
        table: Mapping[str, TopicConfig],
        version: DataVersion,
        cut: tuple[list[str], bool],
    ) -> Iterator[str]:
        """The file's text in pieces, for the ``table`` of ``cut`` at ``version``. The table
        may change meanwhile: each name is written as the table holds it when reached, so a
        change made after the cut may be in the text or not. Either way the file is right
        once the journal's changes since the cut are replayed over it (a put or delete
        replayed gives the same table whatever the name held before)."""
        fresh, complete = cut
        if not complete:  # changed behind this object's back: one C call over the names
            fresh = fresh + [name for name in list(table) if name not in self._sources]
        done = False
        try:
            yield from self._pieces(table, version, fresh)
            done = True
        finally:
            if not done:  # the write failed or was left: the next render merges them again
                self._fresh[:0] = fresh  # one call: a put's append is not lost

    def _pieces(
        self, table: Mapping[str, TopicConfig], version: DataVersion, fresh: list[str]
    ) -> Iterator[str]:
        head = dumps_pretty(TopicConfigSerializeWrapper(data_version=version).to_json())
        before, _, after = head.partition(EMPTY_TABLE)
        parts, sources = self._parts, self._sources
        order: list[str] = []
        out: list[str] = []
        first = True
        encoded = 0
        for name in self._merged(fresh):
            tc = table.get(name)
            if tc is None:  # gone (dropped, or removed without a drop)
                if name in sources and name not in table:
                    sources.pop(name, None)
                    parts.pop(name, None)
                continue
            if order and order[-1] == name:  # dropped and put again since the last render
                continue
            order.append(name)
            if sources.get(name) is not tc:  # stored without a put (load, system)
                # the text first, the source last (a put does the reverse), so a source
                # is never left beside an older text: a put racing this leaves either its
                # text with its source or an older source, which the next render redoes
                parts[name] = encode_part(name, to_json(tc))
                sources[name] = tc
                encoded += 1
                if encoded % ENCODE_EVERY == 0:  # ~0.1 ms each: after a load, every name
                    pause()
            out.append(parts[name])
            if len(out) == YIELD_EVERY:
                yield (before + '"topicConfigTable":{\n' if first else ",\n") + ",\n".join(out)
                first = False
                out = []
        self._order = order
        if first and not out:
            yield head
            return
        if out:
            yield (before + '"topicConfigTable":{\n' if first else ",\n") + ",\n".join(out)
        yield "\n\t}" + after

    def _merged(self, fresh: list[str]) -> Iterator[str]:
        """The last render's order with ``fresh`` merged in, a slice at a time."""
        old = self._order
        if not fresh:
            yield from self._paced(old)
            return
        runs = []
        for i in range(0, len(fresh), YIELD_EVERY):
            runs.append(sorted(fresh[i : i + YIELD_EVERY]))
            pause()
        if all(a[-1] < b[0] for a, b in itertools.pairwise(runs)) and (
            not old or old[-1] < runs[0][0]
        ):  # the new names come after all others, in order (names made by a counter)
            yield from self._paced(old)
            for run in runs:
                yield from run
                pause()
            return
        yield from self._paced(heapq.merge(old, *runs))

    @staticmethod
    def _paced(names: Iterator[str] | list[str]) -> Iterator[str]:
        for i, name in enumerate(names):
            if i % YIELD_EVERY == YIELD_EVERY - 1:
                pause()
            yield name
