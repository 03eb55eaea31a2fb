"""rocketq.testing: helpers shipped for tests (in-process servers). Nothing in src imports it."""

from rocketq.testing.blocking_remoting_client import BlockingRemotingClient
from rocketq.testing.broker import run_broker, run_namesrv
from rocketq.testing.wait import until

__all__ = ["BlockingRemotingClient", "run_broker", "run_namesrv", "until"]
