"""Assemble results/report.md from the per-dataset outputs, the summary and the provenance records."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from membench import __version__
from membench.io import atomic_write_text
from membench.runs.ablation import ablated
from membench.benchmarks.record import Benchmark
from membench.jobs.provenance import REPO
from membench.report.artifacts import subset_line
from membench.report.change import change_section
from membench.report.datasets import dataset_section
from membench.report.difficulty import difficulty_markdown
from membench.report.evidence_errata import EvidenceErrataFiles, evidence_errata_section
from membench.report.markdown import table
from membench.report.provenance import provenance_section
from membench.report.paper_figures import published_section
from membench.report.results import results_section


@dataclass
class ReportInputs:
    """What the report reads, as its rule declares it: records, tables, and each file's path (never built here)."""

    datasets: dict[str, Benchmark]  # name -> its benchmark record
    summary: pd.DataFrame
    significance: pd.DataFrame
    runs: list[tuple[str, str]]
    baseline: str
    config: dict[str, Any] = field(default_factory=dict)
    bench_dir: Path = Path("benchmarks")
    extra_sections: list[str] = field(default_factory=list)
    metas: dict[tuple[str, str], Path] = field(default_factory=dict)  # (dataset, run) -> the run's metadata
    normalization: dict[str, Path] = field(default_factory=dict)  # dataset -> its normalization.json
    difficulty: dict[str, Path] = field(default_factory=dict)  # dataset -> its miss-analysis table
    evidence_errata: dict[str, EvidenceErrataFiles] = field(default_factory=dict)  # datasets whose errata applied
    summary_json: Path | None = None


def _metas(inputs: ReportInputs) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for dataset, adapter in inputs.runs:
        path = inputs.metas[dataset, adapter]
        out.setdefault(dataset, {})[adapter] = json.loads(path.read_text(encoding="utf-8"))
    return out


def build_report(inputs: ReportInputs, out: Path) -> None:
    metas = _metas(inputs)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    subset = inputs.config.get("subset")
    parts = [f"# membench report — {subset_line(subset)}" if subset else "# membench report", "",
             f"membench {__version__}, written {stamp}. Every mean comes with a 95% percentile-bootstrap CI "
             f"({inputs.config.get('report', {}).get('bootstrap_resamples', 10000)} resamples) over the dataset's "
             "resampling unit, named above each dataset's tables. Numbers are "
             "from split `all` unless a table says otherwise; `tune` (even question index) is for tuning, `holdout` "
             "(odd) for reporting a tuned system. Ties in every ranking are broken by haystack position "
             "(earlier first), except `bm25-upstream`, which reproduces LongMemEval's argsort order.", "",
             "Every question, with each system's top 10 and the gold evidence in its session: open "
             "[explorer/index.html](explorer/index.html) in a browser, from disk (no server, no network).", ""]
    for dataset, record in inputs.datasets.items():
        spec = inputs.config.get("datasets", {}).get(dataset, {})
        parts += [f"## {dataset} ({record.kind})", "", units_note(record, spec), ""]
        parts.append(results_section(dataset, record, inputs.summary, inputs.significance, metas.get(dataset, {}),
                                     inputs.baseline, ablated(inputs.config) if inputs.config else ()))
        change = change_section(dataset, inputs.summary, [a for d, a in inputs.runs if d == dataset])
        parts += [change] if change else []
        parts.append(published_section(dataset, record.kind, inputs.summary, spec, metas.get(dataset, {})))
        errata = inputs.evidence_errata.get(dataset)
        parts += [evidence_errata_section(dataset, record, errata)] if errata else []
        parts += [f"![{dataset} metric@k](plots/{dataset}_curve.png)",
                  f"![{dataset} by question group](plots/{dataset}_groups.png)", ""]
        difficulty = inputs.difficulty.get(dataset)
        if difficulty is not None and difficulty.exists():
            parts += [difficulty_markdown(pd.read_parquet(difficulty)),
                      f"![{dataset} where adapters miss](plots/{dataset}_difficulty.png)", ""]
        parts.append(dataset_section(dataset, inputs.normalization[dataset]))
    parts += inputs.extra_sections
    parts.append(_adapter_section(metas))
    summary_json = inputs.summary_json
    environment = json.loads(summary_json.read_text(encoding="utf-8")).get("environment") \
        if summary_json is not None and summary_json.exists() else None
    parts.append(provenance_section(REPO, inputs.config, inputs.bench_dir, environment))
    atomic_write_text(out, "\n".join(parts))


def _adapter_section(metas: dict[str, dict[str, dict]]) -> str:
    seen: dict[str, dict] = {}
    for per in metas.values():
        for name, meta in per.items():
            seen.setdefault(name, meta)
    rows = [(name, m["adapter"], m["class"], json.dumps(m["config"], sort_keys=True),
             ", ".join(m["uses_metadata"]) or "none") for name, m in seen.items()]
    return "\n".join(["## Adapters", "", table(["run", "adapter", "class", "config", "oracle metadata"], rows,
                                                numeric=()), ""])


def units_note(record: Benchmark, spec: dict) -> str:
    """Which retrieval unit the dataset's documents are (the benchmark's own, or membench's plain text)."""
    if record.unit_format is not None and spec.get("units", "upstream") != "upstream":
        return "Retrieval units: plain (`units: plain`): each turn's text plus `[shares image: <caption>]`."
    return record.units_note
