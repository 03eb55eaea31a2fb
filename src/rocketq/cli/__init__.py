"""The rocketq command line: one module per noun, imported when its command runs.

``cli`` is the click group behind the ``rocketq`` command (``rocketq --help``).
"""

from rocketq.cli.main import cli

__all__ = ["cli"]
