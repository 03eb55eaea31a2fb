"""Options of the ``rocketq-store`` data source, parsed once on the driver.

Spark hands options over lower-cased with string values (``CaseInsensitiveDict`` in
pyspark/sql/datasource.py); an unknown option or a bad value is a ``ConfigError`` that names it.
The parsed ``StoreOptions`` is a small frozen dataclass, pickled to the executors with the
reader.

=====================  ==========================================================  =========
option                 meaning                                                     default
=====================  ==========================================================  =========
path / paths           store root(s); ``paths`` is a JSON list or comma-separated  required
brokerName(s)          the ``broker`` column per store (comma-separated)           dir name
splitBytes             bytes per split inside a segment                            64 MiB
verifyCrc              check every body's CRC32                                    true
onCorruptRecord        ``fail`` (CorruptionError with path and offset) or ``skip``  fail
endOffset              commitlog cut-off: records starting at or after it are out  none
topics                 comma-separated topics to keep                              all
output                 ``messages`` (the read schema) or ``dispatch`` (rebuild)    messages
batchRows              rows per Arrow batch                                        8192
messageDelayLevel      the store's delay levels (tags codes of SCHEDULE_TOPIC)     default
=====================  ==========================================================  =========
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from rocketq.errors import ConfigError
from rocketq.spark.store.split import DEFAULT_SPLIT_BYTES, StoreInput
from rocketq.store.config import DEFAULT_DELAY_LEVELS, StoreConfig

OPTION_NAMES = (
    "path",
    "paths",
    "brokerName",
    "brokerNames",
    "splitBytes",
    "verifyCrc",
    "onCorruptRecord",
    "endOffset",
    "topics",
    "output",
    "batchRows",
    "messageDelayLevel",
)
OUTPUTS = ("messages", "dispatch")
CORRUPT_MODES = ("fail", "skip")
_BY_LOWER = {name.lower(): name for name in OPTION_NAMES}


@dataclass(frozen=True, slots=True)
class StoreOptions:
    stores: tuple[StoreInput, ...]
    split_bytes: int = DEFAULT_SPLIT_BYTES
    verify_crc: bool = True
    skip_corrupt: bool = False
    end_offset: int = -1
    topics: frozenset[str] | None = None
    output: str = "messages"
    batch_rows: int = 8192
    message_delay_level: str = DEFAULT_DELAY_LEVELS

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> StoreOptions:
        raw = {_canonical(k): str(v) for k, v in options.items()}
        stores = _stores(raw)
        topics = raw.get("topics")
        output = _choice(raw, "output", OUTPUTS, "messages")
        delay = raw.get("messageDelayLevel", DEFAULT_DELAY_LEVELS)
        StoreConfig(message_delay_level=delay)  # validates the levels
        return cls(
            stores=stores,
            split_bytes=_int(raw, "splitBytes", DEFAULT_SPLIT_BYTES, minimum=1),
            verify_crc=_bool(raw, "verifyCrc", True),
            skip_corrupt=_choice(raw, "onCorruptRecord", CORRUPT_MODES, "fail") == "skip",
            end_offset=_int(raw, "endOffset", -1, minimum=0),
            topics=frozenset(t.strip() for t in topics.split(",") if t.strip()) if topics else None,
            output=output,
            batch_rows=_int(raw, "batchRows", 8192, minimum=1),
            message_delay_level=delay,
        )

    def delay_table(self) -> dict[int, int]:
        return StoreConfig(message_delay_level=self.message_delay_level).delay_level_table_ms()


def _canonical(key: str) -> str:
    name = _BY_LOWER.get(key.lower())
    if name is None:
        known = ", ".join(OPTION_NAMES)
        raise ConfigError(f"rocketq-store: unknown option {key!r} (known: {known})")
    return name


def _stores(raw: dict[str, str]) -> tuple[StoreInput, ...]:
    if "path" in raw and "paths" in raw:
        raise ConfigError("rocketq-store: give either path or paths, not both")
    text = raw.get("paths", raw.get("path", "")).strip()
    if not text:
        raise ConfigError("rocketq-store: option path (or paths) is required: a store root")
    roots = json.loads(text) if text.startswith("[") else text.split(",")
    roots = [str(r).strip() for r in roots if str(r).strip()]
    names_text = raw.get("brokerNames", raw.get("brokerName", ""))
    names = [n.strip() for n in names_text.split(",")] if names_text else []
    if names and len(names) != len(roots):
        raise ConfigError(f"rocketq-store: {len(names)} broker names for {len(roots)} store paths")
    out = []
    for i, root in enumerate(roots):
        if not os.path.isdir(root):
            raise ConfigError(f"rocketq-store: store path {root!r} is not a directory")
        name = names[i] if names else os.path.basename(os.path.normpath(root))
        out.append(StoreInput(root, name))
    if len({s.broker for s in out}) != len(out):
        raise ConfigError("rocketq-store: two stores share a broker name; set brokerNames")
    return tuple(out)


def _int(raw: dict[str, str], name: str, default: int, *, minimum: int) -> int:
    if name not in raw:
        return default
    try:
        value = int(raw[name])
    except ValueError:
        raise ConfigError(f"rocketq-store: {name} must be an integer, got {raw[name]!r}") from None
    if value < minimum:
        raise ConfigError(f"rocketq-store: {name} must be >= {minimum}, got {value}")
    return value


def _bool(raw: dict[str, str], name: str, default: bool) -> bool:
    value = raw.get(name, str(default)).strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(f"rocketq-store: {name} must be true or false, got {raw[name]!r}")
    return value == "true"


def _choice(raw: dict[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    value = raw.get(name, default).strip().lower()
    if value not in choices:
        raise ConfigError(f"rocketq-store: {name} must be one of {choices}, got {raw[name]!r}")
    return value
