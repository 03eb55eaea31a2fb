"""The rocketq command line: one module per noun."""
