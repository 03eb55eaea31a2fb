"""rocketq.common."""
