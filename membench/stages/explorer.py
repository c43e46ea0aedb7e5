"""Rule explorer: the run's outputs -> results/explorer/, an offline results explorer (index.html + data scripts)."""

from __future__ import annotations

import os
import shutil

from membench.explorer.build import build_explorer
from membench.io import temp_beside
from membench.jobs.job import Job


def rule_explorer(job: Job) -> None:
    """Rule explorer: the run's outputs -> results/explorer/ (index.html + data scripts), swapped in whole."""
    target = job.output.path("folder")
    tmp = temp_beside(target, suffix=".tmp", directory=True)
    try:
        build_explorer(tmp, job)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
