"""Java-compatible hashes: the store's formats (ConsumeQueue, IndexFile) and the write queue of
a message group (Guava's consistentHash).

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


_MASK64 = (1 << 64) - 1
_LCG_MULTIPLIER = 2862933555777941757
_INT32_MAX = (1 << 31) - 1


def _to_int32(value: int) -> int:
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def _double_to_int(value: float) -> int:
    """Java's ``(int) double``: truncation toward zero, saturating at the int range."""
    if value != value:  # NaN
        return 0
    if value >= _INT32_MAX:
        return _INT32_MAX
    if value <= INT32_MIN:
        return INT32_MIN
    return int(value)


def consistent_hash(input_: int, buckets: int) -> int:
    """Guava's ``Hashing.consistentHash(long, int)``: a bucket in ``[0, buckets)`` that moves
    for only ~1/n of the inputs when ``buckets`` grows to n (Lamping and Veach's jump hash,
    driven by Guava's ``LinearCongruentialGenerator``). An int input is sign-extended, as Java
    widens ``consistentHash(int, int)``'s argument; the proxy's SendMessageActivity picks a
    message group's write queue with ``consistentHash(group.hashCode(), writeQueues.size())``.
    """
    if buckets <= 0:
        raise ValueError(f"buckets must be positive: {buckets}")
    state = input_ & _MASK64
    candidate = 0
    while True:
        state = (_LCG_MULTIPLIER * state + 1) & _MASK64
        # (double) ((int) (state >>> 33) + 1) / 0x1.0p31: the int sum may wrap to MIN_VALUE
        next_double = _to_int32((state >> 33) + 1) / 2147483648.0
        nxt = _double_to_int((candidate + 1) / next_double)
        if 0 <= nxt < buckets:
            candidate = nxt
        else:
            return candidate


def message_group_queue_index(group: str, write_queue_count: int) -> int:
    """The write queue index of a message group (``__SHARDINGKEY``) among ``write_queue_count``
    queues sorted by (broker name, queue id): RocketMQ 5's proxy, SendMessageActivity's
    SendMessageQueueSelector, over MessageQueueSelector's sorted write queues."""
    return consistent_hash(java_string_hash(group), write_queue_count)
