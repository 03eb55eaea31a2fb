"""rocketq.client."""
