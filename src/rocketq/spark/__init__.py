"""rocketq.spark."""
