"""Read the per-job records Snakemake writes for each rule's `benchmark:` (`benchmarks/<rule>[/<dataset>[/...]].tsv`).

Why: they give every job's wall seconds and peak RSS whatever rules the workflow has, so the scale benchmark
groups them by the first path part (the rule) and needs no change when a stage is added or split.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from membench.report.provenance import costs_by_rule


def read_jobs(work: Path, datasets: set[str]) -> list[dict[str, Any]]:
    """One row per job: rule, dataset (when the path names one), job name, seconds, max_rss (MiB), cpu_time, as the
    report reads them (a forked job's from its child: membench.jobs.forked_usage)."""
    rows = []
    for job in costs_by_rule(work / "benchmarks").itertuples():
        parts = job.job.split("/")
        dataset = next((p for p in parts[1:] if p in datasets), None)
        rows.append({"job": job.job, "rule": parts[0], "dataset": dataset,
                     "target": "/".join(p for p in parts[1:] if p != dataset) or None,
                     "s": _number(job.seconds), "max_rss_mb": _number(job.max_rss_mb), "cpu_s": _number(job.cpu_s)})
    return rows


def _number(value: float) -> float | None:
    return None if pd.isna(value) else float(value)


def by_rule(jobs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per rule: job count, summed and largest seconds, peak RSS and the job that had it."""
    out: dict[str, dict[str, Any]] = {}
    for job in jobs:
        rule = out.setdefault(job["rule"], {"jobs": 0, "s": 0.0, "max_s": 0.0, "max_rss_mb": None, "max_rss_job": None})
        rule["jobs"] += 1
        rule["s"] += job["s"] or 0.0
        rule["max_s"] = max(rule["max_s"], job["s"] or 0.0)
        if job["max_rss_mb"] is not None and (rule["max_rss_mb"] is None or job["max_rss_mb"] > rule["max_rss_mb"]):
            rule["max_rss_mb"], rule["max_rss_job"] = job["max_rss_mb"], job["job"]
    return out


def jobs_run(snakemake_log: Path) -> dict[str, dict[str, float]]:
    """Per rule, from the Snakemake log (so rules without a `benchmark:` count too): jobs started and their summed
    seconds, start to `Finished jobid` (the log's timestamps have a resolution of one second)."""
    stamp, rule, started, out = None, None, {}, {}
    for line in snakemake_log.read_text().splitlines():
        if re.fullmatch(r"\[\w{3} \w{3} +\d+ [\d:]{8} \d{4}\]", line):
            stamp = datetime.strptime(" ".join(line[1:-1].split()), "%a %b %d %H:%M:%S %Y")
        elif match := re.fullmatch(r"(?:local)?rule (\S+):", line):
            rule = match.group(1)
            out.setdefault(rule, {"jobs": 0, "s": 0.0})["jobs"] += 1
        elif (match := re.fullmatch(r"\s+jobid: (\d+)", line)) and rule:
            started[match.group(1)], rule = (out[rule], stamp), None
        elif (match := re.match(r"Finished jobid: (\d+)", line)) and match.group(1) in started:
            record, start = started.pop(match.group(1))
            record["s"] += (stamp - start).total_seconds()
    return out
