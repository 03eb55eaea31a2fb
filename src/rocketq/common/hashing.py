"""Java-compatible hashes used by the store's formats (ConsumeQueue, IndexFile).

``java_string_hash`` is ``String.hashCode``: ``h = 31*h + c`` over UTF-16 code units, kept in
a signed 32-bit int. ConsumeQueue tag codes and IndexFile key hashes are built from it.
"""

from __future__ import annotations

INT32_MIN = -(1 << 31)
_MASK32 = 0xFFFFFFFF


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` as a signed int32."""
    h = 0
    if s.isascii():
        for c in s.encode("ascii"):
            h = (31 * h + c) & _MASK32
    else:
        units = s.encode("utf-16-be", "surrogatepass")  # Java hashes lone surrogates too
        for i in range(0, len(units), 2):
            h = (31 * h + (units[i] << 8 | units[i + 1])) & _MASK32
    return h - (1 << 32) if h & 0x80000000 else h


def tags_string_to_tags_code(tags: str | None) -> int:
    """The ConsumeQueue tags code of a TAGS property: its hash, 0 when absent or empty."""
    if not tags:
        return 0
    return java_string_hash(tags)


def index_key_hash(key: str) -> int:
    """IndexFile keyHash: ``abs(hashCode)``, and 0 for Integer.MIN_VALUE (indexKeyHashMethod)."""
    h = java_string_hash(key)
    return 0 if h == INT32_MIN else abs(h)
