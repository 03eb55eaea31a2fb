"""A fault suite on real processes for controller mode: :mod:`.cluster` starts and faults the
group, :mod:`.load` drives SYNC producers and a consumer that write the ledger, :mod:`.checker`
reads the stopped stores back, :mod:`.runner` runs the schedule (``python -m
rocketq.testing.failover.runner --cycles N``). Nothing in product code imports it."""
