"""The properties map of a chunk of records, parsed without a Python object per record.

The properties strings of the chunk arrive back to back (``data``, cut at ``offsets``). The
cut follows ``properties.string_to_properties`` (RocketMQ's ``string2messageProperties``):
a string splits into segments at every 0x02; a segment splits at its first 0x01 into name
and value; only pairs whose name and value are both non-empty are kept. numpy finds the
separators of the whole chunk at once; the entries become one Arrow ``MapArray``.

Two things a dict does that a map does not: it keeps one entry per name, and decoding a
record fails when its properties are not UTF-8. ``count`` is therefore the number of leading
records with valid UTF-8 and no repeated name; the caller hands the next one to the row reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from rocketq.common.properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR

Ints = npt.NDArray[np.int64]
Bytes = npt.NDArray[np.uint8]
NAME_VALUE = ord(NAME_VALUE_SEPARATOR)
PAIR_END = ord(PROPERTY_SEPARATOR)
MAP_TYPE = pa.map_(pa.string(), pa.string())


@dataclass(frozen=True, slots=True)
class PropertiesColumn:
    """The map of the first ``count`` records, with each entry's row and parts at hand."""

    count: int
    map: Any  # pa.MapArray
    rows: Ints  # the row of each entry
    names: Any  # pa.StringArray, one per entry
    values: Any
    codes: Ints  # each entry's name as an index into ``name_codes``
    name_codes: dict[str, int]  # the distinct names of the chunk (a handful)

    def head(self, n: int) -> PropertiesColumn:
        """The first ``n`` records (n <= count)."""
        if n == self.count:
            return self
        kept = int(np.searchsorted(self.rows, n, side="left"))
        return PropertiesColumn(
            n,
            self.map[:n],
            self.rows[:kept],
            self.names[:kept],
            self.values[:kept],
            self.codes[:kept],
            self.name_codes,
        )

    def lookup(self, name: str) -> Any:
        """The value of property ``name`` of each record, null where it has none."""
        code = self.name_codes.get(name)
        hit = np.flatnonzero(self.codes == code) if code is not None else np.empty(0, np.int64)
        index = np.full(self.count, -1, np.int64)
        index[self.rows[hit]] = hit
        return self.values.take(pa.array(index, mask=index < 0))


def parse_properties(data: Bytes, offsets: Ints) -> PropertiesColumn:
    """The map of each properties string in ``data`` (cut at ``offsets``)."""
    count = _utf8_rows(data, offsets)
    data, offsets = data[: offsets[count]], offsets[: count + 1]
    pair_ends = np.flatnonzero(data == PAIR_END)
    # two sorted runs each: the stable sort (timsort for int64) merges them in linear time
    seg_starts = np.sort(np.concatenate([offsets[:-1], pair_ends + 1]), kind="stable")
    seg_ends = np.sort(np.concatenate([pair_ends, offsets[1:]]), kind="stable")
    name_values = np.flatnonzero(data == NAME_VALUE)
    at = np.searchsorted(name_values, seg_starts)
    sep = name_values[np.minimum(at, max(len(name_values) - 1, 0))] if len(name_values) else at
    keep = (at < len(name_values)) & (sep < seg_ends) & (sep > seg_starts)
    keep &= seg_ends - sep > 1
    starts, seps, ends = seg_starts[keep], sep[keep], seg_ends[keep]
    entry_rows = np.searchsorted(offsets, starts, side="right") - 1
    names = _strings(data, starts, seps)
    values = _strings(data, seps + 1, ends)
    encoded = pc.dictionary_encode(names)  # names compared once, as small ints
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), np.int64)
    name_codes = {name: i for i, name in enumerate(encoded.dictionary.to_pylist())}
    count = min(count, _first_repeated_row(entry_rows, codes))
    kept = int(np.searchsorted(entry_rows, count, side="left"))
    if kept < len(entry_rows):
        entry_rows, names, values = entry_rows[:kept], names[:kept], values[:kept]
        codes = codes[:kept]
    entry_offsets = np.zeros(count + 1, np.int64)
    np.cumsum(np.bincount(entry_rows, minlength=count), out=entry_offsets[1:])
    mapped = pa.MapArray.from_arrays(pa.array(entry_offsets.astype(np.int32)), names, values)
    return PropertiesColumn(
        count, mapped.cast(MAP_TYPE), entry_rows, names, values, codes, name_codes
    )


def _utf8_rows(data: Bytes, offsets: Ints) -> int:
    """How many leading properties strings are valid UTF-8."""
    texts = pa.Array.from_buffers(
        pa.string(),
        len(offsets) - 1,
        [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)],
    )
    try:
        texts.validate(full=True)
        return len(offsets) - 1
    except pa.ArrowInvalid:
        for i in range(len(offsets) - 1):
            try:
                data[offsets[i] : offsets[i + 1]].tobytes().decode("utf-8")
            except UnicodeDecodeError:
                return i
        raise


def _strings(data: Bytes, starts: Ints, ends: Ints) -> Any:
    """The strings at ``[starts, ends)`` of ``data``, gathered back to back."""
    lengths = ends - starts
    offsets = np.zeros(len(starts) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    index = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    packed = data[index]
    return pa.Array.from_buffers(
        pa.string(),
        len(starts),
        [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(packed)],
    )


def _first_repeated_row(entry_rows: Ints, codes: Ints) -> int:
    """The first row holding one name twice (a dict would keep one entry), else past the end."""
    if len(entry_rows) == 0:
        return int(np.iinfo(np.int64).max)
    width = int(codes.max()) + 1
    pairs = np.sort(entry_rows * width + codes, kind="stable")  # a sorted run per row
    dup = np.flatnonzero(pairs[1:] == pairs[:-1])
    return int(pairs[dup[0]] // width) if len(dup) else int(np.iinfo(np.int64).max)
