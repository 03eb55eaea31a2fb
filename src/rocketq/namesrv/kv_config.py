"""KVConfigManager: namespaced key/value settings (e.g. ORDER_TOPIC_CONFIG), optionally persisted.

The file has RocketMQ's ``kvConfig.json`` shape: ``{"configTable": {namespace: {key: value}}}``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from rocketq.errors import ConfigError

log = logging.getLogger(__name__)

NAMESPACE_ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"


class KVConfigManager:
    def __init__(self, path: str | None = None) -> None:
        self._path = Path(path) if path else None
        self._table: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def load(self) -> None:
        if self._path is None or not self._path.exists():
            return
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
            table = data.get("configTable") or {}
            self._table = {ns: {str(k): str(v) for k, v in kv.items()} for ns, kv in table.items()}
        except (ValueError, AttributeError) as exc:
            raise ConfigError(f"{self._path}: kv config does not parse: {exc}") from exc

    def put_kv_config(self, namespace: str, key: str, value: str) -> None:
        with self._lock:
            self._table.setdefault(namespace, {})[key] = value
            self._persist()

    def delete_kv_config(self, namespace: str, key: str) -> None:
        with self._lock:
            table = self._table.get(namespace)
            if table is not None and table.pop(key, None) is not None:
                if not table:
                    del self._table[namespace]
                self._persist()

    def get_kv_config(self, namespace: str, key: str) -> str | None:
        with self._lock:
            return self._table.get(namespace, {}).get(key)

    def get_kv_list_by_namespace(self, namespace: str) -> dict[str, str] | None:
        with self._lock:
            table = self._table.get(namespace)
            return dict(table) if table else None

    def _persist(self) -> None:
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_suffix(self._path.suffix + ".tmp")
        text = json.dumps({"configTable": self._table}, indent=4, sort_keys=True)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._path)
