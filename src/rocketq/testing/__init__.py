"""rocketq.testing: helpers shipped for tests (in-process servers). Nothing in src imports it."""
