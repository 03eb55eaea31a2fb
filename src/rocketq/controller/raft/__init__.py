"""rocketq.controller.raft: consensus as a library with no IO, to come (as etcd-io/raft).

The core will take messages and ticks in (``step(msg)``, ``tick()``) and hand back a ready
batch of messages to send, entries to persist and entries to apply; the embedding server (or
a seeded, single-threaded simulator with virtual time) does the IO. An import contract keeps
asyncio, sockets, threads and the clock out of this package.
"""
