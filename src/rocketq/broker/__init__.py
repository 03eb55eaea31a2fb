"""rocketq.broker."""
