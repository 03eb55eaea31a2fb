"""Every ``rocketq`` command's ``--help`` shows an example of itself."""

from __future__ import annotations

from collections.abc import Iterator

import click
from click.testing import CliRunner

from rocketq.cli.main import cli


def leaf_commands(command: click.Command, path: list[str]) -> Iterator[list[str]]:
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from leaf_commands(sub, [*path, name])
    else:
        yield path


def test_every_command_help_has_an_example_of_itself() -> None:
    runner = CliRunner()
    paths = list(leaf_commands(cli, []))
    assert len(paths) > 40  # admin's commands and the others
    for path in paths:
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Example:" in result.output, path
        assert f"rocketq {path[0]}" in result.output.split("Example:")[1], path
