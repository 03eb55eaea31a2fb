"""The kinds of event on the simulation's queue."""

TICK, DELIVER, CLIENT, FAULT, HEAL, RESTART, TIMEOUT = range(7)
EVENT_NAMES = ("tick", "deliver", "client", "fault", "heal", "restart", "timeout")
