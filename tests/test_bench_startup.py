"""bench/startup.py: the fixed costs a no-op rerun and a job are compared with are measured on real processes."""

from __future__ import annotations

import os
import sys

import pytest

from bench.startup import median_wall, empty_workflow_seconds, handed_over_startup_seconds, job_startup_seconds
from conftest import REPO
from membench.jobs.fork_server import JOURNAL


def test_snakemake_on_an_empty_workflow_and_a_jobs_imports_run():
    assert empty_workflow_seconds(1, repeats=1) > 0
    assert job_startup_seconds(repeats=1, env=dict(os.environ, PYTHONPATH=str(REPO))) > 0


def test_the_handed_over_start_up_is_timed_on_jobs_the_fork_server_ran(tmp_path):
    """Each timed job (and the untimed first) ran in a child of the server, not in its own process."""
    journal = tmp_path / "journal.tsv"
    env = dict(os.environ, PYTHONPATH=str(REPO), **{JOURNAL: str(journal)})
    assert handed_over_startup_seconds(REPO, repeats=2, env=env) > 0
    assert [line.split("\t")[2] for line in journal.read_text().splitlines()] == ["0", "0", "0"]


def test_a_failing_command_is_an_error_not_a_time():
    with pytest.raises(RuntimeError, match=r"failed \(3\)"):
        median_wall([sys.executable, "-c", "raise SystemExit(3)"], 1)
