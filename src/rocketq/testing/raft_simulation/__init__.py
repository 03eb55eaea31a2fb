"""A deterministic simulator for ``rocketq.controller.raft`` (tigerbeetle VOPR style): seeded,
single-threaded, virtual time, a hostile network and disk, invariants after every step and a
linearizability check of the clients' compare-and-set history at the end.

``run_seed(seed)`` runs one seed; a failing seed replays exactly. ``python -m
rocketq.testing.raft_simulation --seeds N`` runs many in a process pool.
"""

from rocketq.testing.raft_simulation.result import SimulationConfig, SimulationResult
from rocketq.testing.raft_simulation.simulator import Simulation, run_seed

__all__ = ["Simulation", "SimulationConfig", "SimulationResult", "run_seed"]
