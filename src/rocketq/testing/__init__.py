"""rocketq.testing."""
