"""ConfigManager: the broker's JSON config files as RocketMQ writes and reads them (RocketMQ's
ConfigManager).

Written in fastjson's pretty form (``fastjson.dumps_pretty``), read with ``fastjson.loads``
(standard JSON plus bare integer keys). Persist (4.x): write ``<file>.tmp``, copy the
old ``<file>`` to ``<file>.bak`` (here a hard link: nothing to copy), replace ``<file>`` with
the temp file, fsync; load falls back to ``<file>.bak`` when ``<file>`` is missing, empty or
does not parse.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rocketq.remoting.protocol import fastjson

log = logging.getLogger(__name__)

#: the temp file is written and synced in pieces of this size
WRITE_CHUNK = 1 << 20


class ConfigManager:
    """Base of the managers that persist one JSON file under ``<store>/config/``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        # a periodic persist (in a thread) and the one at shutdown must not share the .tmp file
        self._file_lock = threading.RLock()

    def encode(self) -> dict[str, Any]:
        raise NotImplementedError

    def decode(self, obj: dict[str, Any]) -> None:
        raise NotImplementedError

    def load(self) -> bool:
        """Load ``<file>``, else ``<file>.bak``; False when neither holds a valid config."""
        for candidate in (self.path, self.path.with_name(self.path.name + ".bak")):
            obj = self._read(candidate)
            if obj is not None:
                self.decode(obj)
                return True
        return False

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        if not text.strip():
            return None
        try:
            obj = fastjson.loads(text, path.name)
        except ValueError as exc:
            log.warning("config file %s does not parse (%s); trying the backup", path, exc)
            return None
        if not isinstance(obj, dict):
            log.warning("config file %s is not a JSON object; trying the backup", path)
            return None
        return obj

    def persist(self) -> None:
        with self._file_lock:
            self._persist()

    def _persist(self) -> None:
        self._write(self.encode())

    def _write(self, obj: dict[str, Any]) -> None:
        """``obj`` as the file: temp file fsynced, old file to ``.bak``, replace, dir fsync."""
        self._write_text(fastjson.dumps_pretty(obj))

    def _write_text(self, text: str) -> None:
        """:meth:`_write` of text already encoded."""
        self._write_pieces([text])

    def _write_pieces(self, pieces: Iterable[str]) -> None:
        """:meth:`_write` of the text ``pieces`` join to, each encoded and written in turn
        (a large file is never one string to copy or encode: topics.json). The temp file is
        synced every ``WRITE_CHUNK`` bytes: a large file (topics.json at 100,000 topics is
        17 MB) never leaves much dirty data for another file's fsync to wait behind (ext4's
        ordered mode flushes it with the next journal commit, the topic journal's included).
        The old file becomes ``.bak`` by a hard link (no copy to write); a copy where links
        fail."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            unsynced = 0
            for piece in pieces:
                data = memoryview(piece.encode("utf-8"))
                for start in range(0, len(data), WRITE_CHUNK):
                    chunk = data[start : start + WRITE_CHUNK]
                    pos = 0
                    while pos < len(chunk):
                        pos += os.write(fd, chunk[pos:])
                    unsynced += len(chunk)
                    if unsynced >= WRITE_CHUNK:
                        os.fdatasync(fd)
                        unsynced = 0
            os.fsync(fd)
        finally:
            os.close(fd)
        if self.path.exists():
            _keep_as_backup(self.path)
        os.replace(tmp, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _keep_as_backup(path: Path) -> None:
    """``path`` (durable: written like this) as ``<path>.bak``, atomically replacing it."""
    bak = path.with_name(path.name + ".bak")
    link = path.with_name(path.name + ".bak.tmp")
    try:
        if link.exists():
            link.unlink()
        os.link(path, link)
        os.replace(link, bak)
    except OSError:
        shutil.copyfile(path, bak)
