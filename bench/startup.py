"""Fixed costs a run pays however small it is: Snakemake's own start-up on an empty workflow (what a no-op rerun
is compared with: issue 36 asks for a no-op rerun within 1.3x of it) and one rule job's Python start-up (a fresh
process importing what a score job imports), each the median of a few runs."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EMPTY_SNAKEFILE = 'rule all:\n    input: []\n'
JOB_IMPORTS = "import snakemake.script, membench.runs.handoff, membench.stages.score"


def median_wall(cmd: list[str], repeats: int, **kwargs) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return statistics.median(times)


def empty_workflow_seconds(cores: int, repeats: int = 3) -> float:
    """`snakemake --cores N` on a Snakefile with one rule and nothing to do, in a folder of its own."""
    with tempfile.TemporaryDirectory(prefix="membench-empty-") as folder:
        (Path(folder) / "Snakefile").write_text(EMPTY_SNAKEFILE)
        return median_wall([sys.executable, "-m", "snakemake", "--cores", str(cores)], repeats, cwd=folder)


def job_startup_seconds(repeats: int = 3, env: dict | None = None) -> float:
    """A fresh Python process importing what a score job's script imports (Snakemake's script support, membench's
    job hand-off and the stage)."""
    return median_wall([sys.executable, "-c", JOB_IMPORTS], repeats, env=env)
