"""Every ``rocketq`` command's ``--help`` shows an example of itself."""

from __future__ import annotations

from collections.abc import Iterator

import click
from click.testing import CliRunner

from rocketq.cli.main import cli


def every_command(command: click.Command, path: list[str]) -> Iterator[list[str]]:
    """``path`` of ``command`` and of every command under it (groups too)."""
    yield path
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from every_command(sub, [*path, name])


def test_every_command_help_has_an_example_of_itself() -> None:
    runner = CliRunner()
    paths = list(every_command(cli, []))
    assert len(paths) > 50  # admin's commands, the groups and the others
    for path in paths:
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Example" in result.output, path  # "Example:" or "Examples:"
        example = result.output.split("Example")[1]
        assert "rocketq " + " ".join(path[:1]) in example, path
        assert all(word in example for word in path), path  # acl's options sit between words
