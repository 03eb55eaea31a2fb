"""A process's figures per thread, read from ``/proc/<pid>/task/*``, for the benches that
account a server's CPU and wake-ups by thread (bench/idle_wakeups.py,
bench/lone_send_account.py).

- ``schedstat``: nanoseconds on the CPU (no 10 ms clock tick);
- ``stat``: user and system CPU in clock ticks (``os.sysconf("SC_CLK_TCK")`` a second);
- ``status``: the thread's name and its voluntary context switches (each a wait that ended:
  a wake-up, for a Python thread a GIL acquisition) and involuntary ones (preemptions).

:func:`python_names` names the threads as Python does (``py-spy dump``), and :func:`by_name`
sums what each name's threads did between two samples.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass

#: ``py-spy dump``'s line for a thread: its native id and Python name
SPY_THREAD = re.compile(r'Thread (\d+) \(\w+\): "(.*)"')


@dataclass(frozen=True)
class ThreadFigures:
    """One thread's counters (or what a thread name's threads added between two samples)."""

    name: str
    cpu_ns: int = 0
    user_ticks: int = 0
    system_ticks: int = 0
    voluntary: int = 0
    involuntary: int = 0

    def __add__(self, other: ThreadFigures) -> ThreadFigures:
        return ThreadFigures(
            self.name,
            self.cpu_ns + other.cpu_ns,
            self.user_ticks + other.user_ticks,
            self.system_ticks + other.system_ticks,
            self.voluntary + other.voluntary,
            self.involuntary + other.involuntary,
        )

    def __sub__(self, other: ThreadFigures) -> ThreadFigures:
        return ThreadFigures(
            self.name,
            self.cpu_ns - other.cpu_ns,
            self.user_ticks - other.user_ticks,
            self.system_ticks - other.system_ticks,
            self.voluntary - other.voluntary,
            self.involuntary - other.involuntary,
        )

    @property
    def ticks(self) -> int:
        """User + system CPU, in clock ticks."""
        return self.user_ticks + self.system_ticks


def sample_threads(pid: int) -> dict[int, ThreadFigures]:
    """tid -> the thread's figures now (a thread that ends while read is left out)."""
    out: dict[int, ThreadFigures] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            base = f"/proc/{pid}/task/{tid}"
            name, voluntary, involuntary = "", 0, 0
            with open(f"{base}/status") as f:
                for line in f:
                    if line.startswith("Name:"):
                        name = line.split(None, 1)[1].strip()
                    elif line.startswith("voluntary_ctxt_switches:"):
                        voluntary = int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches:"):
                        involuntary = int(line.split()[1])
            with open(f"{base}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()  # the name may hold spaces
            with open(f"{base}/schedstat") as f:
                cpu_ns = int(f.read().split()[0])
            out[int(tid)] = ThreadFigures(
                name, cpu_ns, int(fields[11]), int(fields[12]), voluntary, involuntary
            )
    return out


def python_names(pid: int) -> dict[int, str]:
    """tid -> Python thread name, from ``py-spy dump`` (beside the interpreter) when it runs."""
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    try:
        out = subprocess.run(
            [spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    names = {}
    for line in out.splitlines():
        match = SPY_THREAD.match(line)
        if match:
            names[int(match.group(1))] = match.group(2)
    return names


def by_name(
    before: dict[int, ThreadFigures],
    after: dict[int, ThreadFigures],
    names: dict[int, str] | None = None,
) -> dict[str, ThreadFigures]:
    """Thread name (Python's from ``names`` where known, else the OS's) -> what its threads
    did from ``before`` to ``after``, threads of one name summed; a thread born in between
    counted from zero. In the order of ``after``'s threads."""
    out: dict[str, ThreadFigures] = {}
    for tid, now in after.items():
        name = (names or {}).get(tid, now.name)
        grew = now - before.get(tid, ThreadFigures(now.name))
        out[name] = out.get(name, ThreadFigures(name)) + grew
    return out
