"""Small metadata files of controller mode, written so a crash leaves the old file or the new
one, never half (RocketMQ 5's ``MetadataFile`` and ``MixAll.string2File``, made durable).

RocketMQ's ``string2File`` copies the old content to ``<file>.bak`` and then overwrites
``<file>`` in place, with no fsync: a crash can leave a torn file, which the reader survives
only by falling back to the ``.bak``. We keep the ``.bak`` (a Java broker reading our store
still finds it) but write each file as temp file, fsync, rename over, fsync the directory.
"""

from __future__ import annotations

import os

from rocketq.store.paths import fsync_dir

BACKUP_SUFFIX = ".bak"
TEMP_SUFFIX = ".tmp"


def write_atomically(path: str, data: bytes, *, keep_backup: bool = False) -> None:
    """Replace ``path`` by ``data`` durably; with ``keep_backup`` the old content goes to
    ``<path>.bak`` first (durably too)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    if keep_backup:
        previous = read_file(path)
        if previous is not None:
            _replace(path + BACKUP_SUFFIX, previous)
    _replace(path, data)
    fsync_dir(directory)


def _replace(path: str, data: bytes) -> None:
    temp = path + TEMP_SUFFIX
    with open(temp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)


def read_file(path: str) -> bytes | None:
    """The file's bytes, or None when it does not exist."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def remove_durably(path: str) -> None:
    """Delete ``path`` if present and make the deletion durable."""
    try:
        os.remove(path)
    except FileNotFoundError:
        return
    fsync_dir(os.path.dirname(os.path.abspath(path)))
