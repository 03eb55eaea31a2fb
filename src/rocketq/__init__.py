"""rocketq: Apache RocketMQ's design in Python."""

__version__ = "0.1.0"
