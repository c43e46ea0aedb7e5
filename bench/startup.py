"""Fixed costs a run pays however small it is: Snakemake's own start-up on an empty workflow (what a no-op rerun
is compared with: issue 36 asks for a no-op rerun within 1.3x of it) and one rule job's Python start-up (a fresh
process importing what a score job imports, and the same job handed to a fork server that imported it already),
each the median of a few runs."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EMPTY_SNAKEFILE = 'rule all:\n    input: []\n'
JOB_IMPORTS = "import snakemake.script, membench.runs.handoff, membench.stages.score"
# a light rule's script as Snakemake runs it: the preamble's import, the hand-over, then the stage's imports
HANDED_OVER_JOB = ("import snakemake.script\nfrom membench.jobs.hand_over import hand_over\nhand_over()\n"
                   "import membench.runs.handoff, membench.stages.score\n")


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


def handed_over_startup_seconds(repo: Path, repeats: int = 3, env: dict | None = None) -> float:
    """The same job handed to a fork server over `repo`'s rule scripts (membench.jobs.hand_over): a fresh process
    imports Snakemake's preamble and the hand-over, and a child of the server, which has the rest, runs the script.
    The first job, which waits for the server to start, is not counted."""
    from membench.jobs.fork_server import THREAD_VARS, ForkServer

    job_env = {**(env or os.environ), **dict.fromkeys(THREAD_VARS, "1")}  # as Snakemake starts a one-thread job
    server = ForkServer(repo / "scripts")
    saved = dict(os.environ)
    os.environ.update(job_env)
    try:
        server.start()
        with tempfile.TemporaryDirectory(prefix="membench-handed-over-") as folder:
            script = Path(folder) / "job.py"
            script.write_text(HANDED_OVER_JOB)
            cmd = [sys.executable, str(script)]
            median_wall(cmd, 1, env=dict(os.environ))
            return median_wall(cmd, repeats, env=dict(os.environ))
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(saved)
