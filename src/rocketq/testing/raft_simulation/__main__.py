"""``python -m rocketq.testing.raft_simulation``: see ``runner.py``."""

import sys

from rocketq.testing.raft_simulation.runner import main

sys.exit(main())
