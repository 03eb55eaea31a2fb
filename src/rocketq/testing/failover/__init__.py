"""A fault suite on real processes for controller mode: :mod:`.cluster` starts the name
servers with controllers and the broker groups, :mod:`.partition` puts a proxy on every
controller link, :mod:`.faults` injects and heals, :mod:`.load` runs the :mod:`.producer`
processes (each writing its ledger) and the consumer groups, :mod:`.pop_timer` a POP group and
pending timers, :mod:`.checker` reads the stopped stores back, :mod:`.runner` runs the schedule
(``python -m rocketq.testing.failover.runner --cycles N``). Nothing in product code imports it."""
