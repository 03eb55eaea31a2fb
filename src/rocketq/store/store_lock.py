"""Who holds a store's ``lock`` file.

RocketMQ's DefaultMessageStore locks the first byte of ``<storePathRootDir>/lock`` with
``FileChannel.tryLock`` (a POSIX record lock on Linux, as our ``fcntl.lockf``) and writes
"lock" into it; the file names no process. The kernel does: ``/proc/locks`` lists every
lock with the holder's PID and the file's device and inode, so a refused ``load`` (or ``store
check`` on a live store) can say which process holds the store without touching the lock.
Taking the lock to probe it would be wrong: POSIX locks belong to the process, and closing
any descriptor of the file drops them, so a probe in the broker's own process would free the
broker's lock.
"""

from __future__ import annotations

import os

PROC_LOCKS = "/proc/locks"


def lock_holder(path: str, proc_locks: str = PROC_LOCKS) -> int | None:
    """The PID holding a lock on ``path`` (None: unlocked, no such file, or no /proc)."""
    try:
        st = os.stat(path)
        with open(proc_locks, encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    wanted = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    for line in lines:
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 4242 08:01:1234 0 0"; a waiter's line has "->" after "1:"
        if len(fields) < 6 or fields[1] == "->":
            continue
        pid, device = fields[4], fields[5].split(":")
        if len(device) != 3 or not pid.isdigit():
            continue  # an open file description lock has no PID (-1)
        try:
            found = (int(device[0], 16), int(device[1], 16), int(device[2]))
        except ValueError:
            continue
        if found == wanted:
            return int(pid)
    return None


def process_name(pid: int) -> str:
    """``pid``'s command line on one line, shortened, or "" when /proc does not say."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return ""
    if argv:
        argv[0] = os.path.basename(argv[0])
    text = " ".join(" ".join(argv).split())
    return text if len(text) <= 80 else text[:77] + "..."


def describe_holder(path: str) -> str:
    """ "process 4242 (rocketq server --store ...)", or "another process" if unknown."""
    pid = lock_holder(path)
    if pid is None:
        return "another process"
    name = process_name(pid)
    return f"process {pid} ({name})" if name else f"process {pid}"
