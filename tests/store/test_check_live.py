"""``store check`` on a store a process is writing: it checks up to the commitlog end it read
(a snapshot), says the store is in use, and reports no problem that is only a write in
flight; a folder that is not a store is refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rocketq.cli.store import store as store_cli
from rocketq.store.check import check_store
from rocketq.store.dump import IndexLayout
from rocketq.testing.store_writer import store_config

pytestmark = pytest.mark.timeout(90)


def test_check_of_a_store_being_written_reports_no_problem(tmp_path: Path) -> None:
    root = tmp_path / "store"
    writer = subprocess.Popen(
        [sys.executable, "-m", "rocketq.testing.store_writer", str(root), "0", "4"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
        for _ in range(3000):  # past a few commitlog and consume queue files
            assert writer.stdout.readline().startswith("ack")
        config = store_config(str(root))
        for _ in range(3):
            report = check_store(str(root), config=config, index_layout=IndexLayout.of(config))
            assert report.problems == [], str(report)
            assert report.in_use_by == writer.pid
            assert report.records >= 3000
            assert f"in use by process {writer.pid}" in str(report)
            for _ in range(500):  # the writer goes on between the checks
                writer.stdout.readline()
    finally:
        writer.kill()
        writer.communicate(timeout=30)


@pytest.mark.parametrize("folder", ["empty", "etc"])
def test_check_refuses_a_folder_that_is_not_a_store(tmp_path: Path, folder: str) -> None:
    root = tmp_path / folder
    root.mkdir()
    if folder == "etc":
        (root / "hosts").write_text("127.0.0.1 localhost\n")
        (root / "ssl").mkdir()
    result = CliRunner().invoke(store_cli, ["check", "--store", str(root)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "not a store" in lines[0]
    assert str(root) in lines[0]
