"""rocketq.admin."""
