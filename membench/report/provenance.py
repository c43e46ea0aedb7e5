"""Provenance for the report: code commit, the environment (machine, libraries, numeric profile, package versions),
config, and per-rule time and memory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import yaml

from membench.jobs import forked_usage
from membench.jobs.fork_server import forked_rules
from membench.machine.environment import packages
from membench.report.markdown import table


def git_commit(repo: Path) -> str:
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head + (" (with uncommitted changes)" if dirty else "")


def _machine(m: dict) -> str:
    return f"{m['cpu']} ({m['vendor']}), {m['logical_cpus']} logical CPUs; {m['os']}, Python {m['python']}"


def environment_rows(environment: dict) -> list[tuple[str, str]]:
    """The environment of summary.json as (field, value) rows: this machine, threads, BLAS, and per embedding
    model its revision, numeric tag and the code path torch took in the embed jobs."""
    m = environment["machine"]
    rows = [("machine", _machine(m)), ("vector extensions", " ".join(m["vector_extensions"]) or "none found"),
            ("thread variables", ", ".join(f"{k}={v if v is not None else 'unset'}"
                                           for k, v in environment["threads"].items())),
            ("numpy BLAS", environment["numpy_blas"])]
    for model, entry in (environment.get("embedding") or {}).items():
        rows += [(f"{model}: revision", str(entry["model_revision"])), (f"{model}: numeric tag", str(entry["numeric_tag"]))]
        machines = entry["machines"] if isinstance(entry["machines"], list) else [entry["machines"]]
        if machines != [m]:
            rows.append((f"{model}: embedded on", "; ".join(_machine(x) for x in machines)))
        runs = entry["torch"] if isinstance(entry["torch"], list) else [entry["torch"]]
        for run in filter(None, runs):
            path, libraries = run["numeric_path"], run["libraries"]
            rows.append((f"{model}: torch path", f"ATen {path['aten']}, MKL mode {path['mkl_cbwr']}, oneDNN at most "
                         f"{path['onednn_max_isa']}; {run['threads']} thread(s); BLAS {libraries['blas']} "
                         f"(MKL {libraries['mkl']}, oneDNN {libraries['onednn']})"))
        if not any(runs):
            rows.append((f"{model}: torch path", "no vector computed by this run (all from the cache)"))
    return rows


def costs_by_rule(bench_dir: Path) -> pd.DataFrame:
    """One row per Snakemake `benchmark:` file (its last): the job, wall seconds, peak memory (MB) and CPU seconds
    (NaN where not measured); for a job that ran in a child of the fork server, that child's peak and CPU
    (`membench.jobs.forked_usage`). The report's per-job table and bench/job_records.py both read jobs here."""
    rows = []
    for path in sorted(Path(bench_dir).rglob("*.tsv")):
        data = pd.read_csv(path, sep="\t")
        if data.empty:
            continue
        job = str(path.relative_to(bench_dir).with_suffix(""))
        forked = forked_usage.for_benchmark(path, Path(bench_dir)) or {}
        rows.append({"job": job, "seconds": float(data["s"].iloc[-1]),
                     "max_rss_mb": forked.get("max_rss_mb", _number(data, "max_rss")),
                     "cpu_s": forked.get("cpu_s", _number(data, "cpu_time"))})
    return pd.DataFrame(rows, columns=["job", "seconds", "max_rss_mb", "cpu_s"])


def _number(data: pd.DataFrame, column: str) -> float:
    value = pd.to_numeric(data[column].iloc[-1], errors="coerce") if column in data else float("nan")
    return float(value)


def provenance_section(repo: Path, config: dict, bench_dir: Path, environment: dict | None = None) -> str:
    """`environment`: summary.json's (None: only this process's package versions are shown)."""
    costs = costs_by_rule(bench_dir)
    parts = ["## Provenance", "", f"- code: membench commit `{git_commit(repo)}`",
             "- data: the sha256 of every source file is listed in its dataset section", ""]
    if environment:
        parts += ["Environment (`environment` in summary.json; `membench compare` lists what differs between runs):",
                  "", table(["field", "value"], environment_rows(environment), numeric=()), ""]
    versions = (environment or {}).get("packages") or packages()
    parts += ["Package versions:", "", table(["package", "version"], list(versions.items()), numeric=()), "",
              "Per-job time and peak memory (Snakemake `benchmark:` files):", ""]
    if costs.empty:
        parts.append("(no benchmark files found)")
    else:
        parts.append(table(["job", "wall s", "max RSS MB"],
                           [(r.job, round(r.seconds, 2), round(r.max_rss_mb, 1)) for r in costs.itertuples()],
                           numeric=(1, 2)))
        parts += ["", f"Total wall time of the jobs: {costs.seconds.sum():.1f} s."]
        if config.get("fork_server"):
            parts += ["", "In a local run the jobs of " + ", ".join(forked_rules(repo / "scripts")) + " run in "
                      "children of the fork server (`fork_server`): their max RSS is the child's peak, which counts "
                      "the pages of the server's imports that it shares, as a fresh process counts its own imports."]
    parts += ["", "Configuration of this run (after defaults were filled in):", "", "```yaml",
              yaml.safe_dump(config, sort_keys=False).rstrip(), "```", ""]
    return "\n".join(parts)
