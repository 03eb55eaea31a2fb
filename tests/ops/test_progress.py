"""Long work shows progress: ``rocketq store check`` reports how far its commit log scan got,
ending at the whole of it, and prints the progress on stderr, the report on stdout."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from rocketq.cli.main import cli
from rocketq.store.check import check_store
from tests.common.vectors import write_vector_store


def test_store_check_progress_rises_to_the_commit_log_size(tmp_path: Path) -> None:
    root = str(write_vector_store(tmp_path).root)
    seen: list[tuple[int, int]] = []
    report = check_store(root, progress=lambda done, total: seen.append((done, total)))
    assert report.ok
    assert seen, "no progress reported"
    dones = [done for done, _ in seen]
    assert dones == sorted(dones)
    assert seen[-1][0] == seen[-1][1] > 0


def test_store_check_cli_prints_progress_on_stderr_and_the_report_on_stdout(
    tmp_path: Path,
) -> None:
    root = str(write_vector_store(tmp_path).root)
    result = CliRunner().invoke(cli, ["store", "check", "--store", root])
    assert result.exit_code == 0, result.output
    assert "checking the commit log" in result.stderr
    assert result.stdout.rstrip().endswith("OK")
    assert "checking the commit log" not in result.stdout
