"""bench/startup.py: the fixed costs a no-op rerun and a job are compared with are measured on real processes."""

from __future__ import annotations

import os
import sys

import pytest

from bench.startup import median_wall, empty_workflow_seconds, job_startup_seconds
from conftest import REPO


def test_snakemake_on_an_empty_workflow_and_a_jobs_imports_run():
    assert empty_workflow_seconds(1, repeats=1) > 0
    assert job_startup_seconds(repeats=1, env=dict(os.environ, PYTHONPATH=str(REPO))) > 0


def test_a_failing_command_is_an_error_not_a_time():
    with pytest.raises(RuntimeError, match=r"failed \(3\)"):
        median_wall([sys.executable, "-c", "raise SystemExit(3)"], 1)
