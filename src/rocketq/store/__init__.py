"""rocketq.store."""
