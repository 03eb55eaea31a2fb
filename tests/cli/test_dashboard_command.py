"""``rocketq dashboard``'s options of issue 21: ``--data-path`` (the history and
users.properties), ``--login-required`` (refused in one line without a users file),
``--access-key``/``--secret-key`` (or the environment) for the dashboard's own ACL account."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from rocketq.cli.dashboard import DEFAULT_DATA_PATH, dashboard


def test_login_required_without_a_users_file_says_what_to_write(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        dashboard, ["--login-required", "--data-path", str(tmp_path), "--port", "0"]
    )
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert str(tmp_path / "users.properties") in lines[0]
    assert "admin=<password>,1" in lines[0]


def test_help_names_the_data_path_login_and_acl_options() -> None:
    text = CliRunner().invoke(dashboard, ["--help"]).output
    for option in ("--data-path", "--login-required", "--access-key", "--secret-key"):
        assert option in text
    assert DEFAULT_DATA_PATH in text
    assert "ROCKETQ_ACCESS_KEY" in text
