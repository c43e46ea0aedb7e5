"""What a job that ran in a child of the fork server used: the child's peak memory and CPU seconds.

Snakemake's `benchmark:` record of a job measures the job's process tree. A job handed to the fork server
(`membench.jobs.hand_over`) runs in a child of the server, outside that tree, so the record's memory and CPU are
those of the process that waited for it. The server reaps each child with `wait4` and sends the job the child's
peak resident set and CPU seconds; the job writes them beside its log (`logs/<rule>/<...>.log` ->
`logs/<rule>/<...>.forked.json`), named as its `benchmarks/<rule>/<...>.tsv` is, and the readers of the benchmark
records (the report's per-job table, bench/job_records.py) take memory and CPU from there. The peak counts the
server's imported modules that the child shares, as a fresh process counts its own imports.

A job first removes any such file its log path names, so a rerun outside the server (a cluster job,
`fork_server: false`) is never given an older run's figures. Kept to the standard library: light jobs import it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

SUFFIX = ".forked.json"


def usage_path(log: str | Path) -> Path:
    """Where a job whose log is `log` keeps its forked child's usage."""
    return Path(log).with_suffix(SUFFIX)


def forget(log: str | Path) -> None:
    """Remove an earlier run's usage for this job, before the job runs (forked or not)."""
    try:
        os.unlink(usage_path(log))
    except FileNotFoundError:
        pass


def record(log: str | Path, max_rss_kib: int, cpu_s: float) -> None:
    """Keep the forked child's usage (`wait4`'s ru_maxrss in KiB; user + system seconds), written whole or not at
    all."""
    path = usage_path(log)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"max_rss_mb": round(max_rss_kib / 1024, 2), "cpu_s": round(cpu_s, 2)}) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)


def for_benchmark(bench_file: Path, bench_dir: Path) -> dict | None:
    """The usage kept for the job whose benchmark record is `bench_file` (under `bench_dir`, beside `logs/`), if it
    ran forked: {"max_rss_mb", "cpu_s"}; None otherwise."""
    path = usage_path(bench_dir.parent / "logs" / bench_file.relative_to(bench_dir))
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
