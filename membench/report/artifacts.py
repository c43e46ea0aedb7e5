"""Artifacts to paste: results/summary.json, LaTeX tables (booktabs) and the console headline table.

Each text artifact opens with a line saying whether it comes from a subset run (`subset_line`), so a
number from a quick run is never mistaken for a full one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from membench import __version__
from membench.analysis.aggregate import against_baseline
from membench.benchmarks.record import Benchmark
from membench.report.answers import answers_json
from membench.report.change import change_json
from membench.report.headlines import ci_text, json_cell
from membench.machine.environment import run_environment
from membench.io import atomic_write_parquet, atomic_write_text, read_table
from membench.jobs.provenance import REPO
from membench.report.provenance import git_commit

TOP = {"split": "all", "group_by": "all"}


def subset_line(subset: Mapping | None) -> str:
    """The first line of every text output: empty for a full run, a warning for a subset run."""
    if not subset:
        return ""
    return (f"SUBSET RUN ({subset['per_group']} questions per question group, seed {subset['seed']}): a quick "
            "check, not figures to report")


def summary_json(summary: pd.DataFrame, records: Mapping[str, Benchmark], subset: Mapping | None = None,
                 gold: Mapping[str, dict] | None = None, counts: Mapping[str, dict] | None = None,
                 provenance: Mapping | None = None, environment: Mapping | None = None,
                 efficiency: Mapping[str, dict] | None = None, significance: pd.DataFrame | None = None) -> str:
    """Headline metrics with CIs per dataset x adapter x split, as JSON text (first key: `subset`); `gold`
    (dataset -> the `gold` counts of its normalization.json) says how many questions each reason left out of
    retrieval scoring or scored on partial gold; `counts` (dataset -> the `counts` of its normalization.json)
    what the parser found, e.g. LongMemEval's questions that list a session twice. Last come `provenance` (code
    version, data checksums, config: `run_provenance`) and `environment` (`membench.machine.environment.run_environment`),
    what `membench compare` lists beside differing figures. `efficiency` (dataset -> its efficiency.json,
    `membench.report.efficiency`) comes after the datasets. With `significance`, a dataset answered in QA mode has
    `answers`: each run's retrieval and answer figures and its tests against the QA baselines
    (`membench.report.answers`)."""
    top = summary[summary.group_by == "all"]
    out: dict = {"subset": subset_line(subset) or None, "datasets": {}}
    for dataset, record in records.items():
        rows = top[(top.dataset == dataset) & top.metric.isin(record.headlines)]
        entry = {"kind": record.kind, "resampling_unit": _first(rows, "unit", "question"), "headline_metrics":
                 [m for m in record.headlines if m in set(rows.metric)],
                 "gold": (gold or {}).get(dataset), "data_counts": (counts or {}).get(dataset), "adapters": {}}
        for r in rows.itertuples():
            cell = json_cell(r)
            entry["adapters"].setdefault(r.adapter, {}).setdefault(r.split, {})[r.metric] = cell
        change = change_json(summary, dataset)
        if change is not None:  # the measures of change, every k (each over its ability's questions)
            entry["change"] = change
        answers = answers_json(summary, significance, dataset) if significance is not None else None
        if answers is not None:
            entry["answers"] = answers
        out["datasets"][dataset] = entry
    out["efficiency"] = dict(efficiency) if efficiency is not None else None
    out["provenance"] = dict(provenance) if provenance is not None else None
    out["environment"] = dict(environment) if environment is not None else None
    text = json.dumps(out, indent=2)
    return "{" + text[len("{\n  "):] + "\n"  # `"subset": ...` on the first line


def _first(rows: pd.DataFrame, column: str, default: str) -> str:
    return str(rows[column].iloc[0]) if column in rows and not rows.empty else default


_LATEX = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
          "~": r"\textasciitilde{}", "^": r"\^{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


def _fmt(x: float) -> str:
    return f"{x:.3f}".replace("0.", ".", 1) if x >= 0 else f"{x:.3f}"


def latex_table(dataset: str, record: Benchmark, summary: pd.DataFrame, significance: pd.DataFrame, baseline: str,
                subset: Mapping | None = None, leave_out: Sequence[str] = ()) -> str:
    """A booktabs table: adapters x headline metrics (split `all`), mean with its 95% CI, the best mean per
    column in bold, and a mark where the difference to the baseline is significant after Holm. Runs in
    `leave_out` (ablation runs) are not rows."""
    rows = summary[(summary.dataset == dataset) & (summary.split == "all") & (summary.group_by == "all")
                   & ~summary.adapter.isin(list(leave_out))]
    metrics = [m for m in record.headlines if m in set(rows.metric)]
    adapters = list(dict.fromkeys(rows.adapter))
    sig = against_baseline(significance)
    sig = sig[(sig.dataset == dataset) & (sig.split == "all") & sig.metric.isin(metrics) & sig.adapter.isin(adapters)]
    marked = {(r.adapter, r.metric) for r in sig.itertuples() if r.p_holm <= 0.05}
    best = {m: rows[rows.metric == m]["mean"].max() for m in metrics}
    n = int(rows.n.max()) if not rows.empty else 0
    unit = _first(rows, "unit", "question")
    family = int(sig.family_size.max()) if not sig.empty else 0
    lines = [f"% {subset_line(subset)}" if subset else f"% membench: {dataset} ({record.kind}), split all",
             r"\begin{table}[t]", r"\centering", r"\small",
             r"\begin{tabular}{l" + "c" * len(metrics) + "}", r"\toprule",
             "Adapter & " + " & ".join(latex_escape(m) for m in metrics) + r" \\", r"\midrule"]
    for adapter in adapters:
        cells = []
        for m in metrics:
            hit = rows[(rows.adapter == adapter) & (rows.metric == m)]
            if hit.empty or math.isnan(hit["mean"].iloc[0]):
                cells.append("--")
                continue
            r = hit.iloc[0]
            mean = _fmt(r["mean"])
            mean = rf"\textbf{{{mean}}}" if r["mean"] == best[m] else mean
            mark = r"$^{*}$" if (adapter, m) in marked else ""
            ci = rf" {{\scriptsize[{_fmt(r.ci_lo)}, {_fmt(r.ci_hi)}]}}" if not math.isnan(r.ci_lo) else \
                rf" {{\scriptsize {latex_escape(ci_text(r.ci_lo, r.ci_hi, r.get('unit', 'question')))}}}"
            cells.append(mean + mark + ci)
        lines.append(latex_escape(adapter) + " & " + " & ".join(cells) + r" \\")
    prefix = "Subset run, not for reporting. " if subset else ""
    caption = (f"{prefix}{latex_escape(dataset)}: mean over {n} questions (split all) with 95\\% bootstrap CI "
               f"(resampling unit: {unit}); best per column in bold. $^{{*}}$: differs from "
               f"{latex_escape(baseline)} in a two-sided paired sign-flip test, Holm--Bonferroni adjusted over "
               f"the family of {family} tests (adapters $\\times$ metrics of this table), $p \\le 0.05$.")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}",
              rf"\label{{tab:membench-{latex_escape(dataset).replace(chr(92), '')}}}", r"\end{table}", ""]
    return "\n".join(lines)


def console_table(summary: pd.DataFrame, records: Mapping[str, Benchmark], subset: Mapping | None = None,
                  metrics_per_dataset: int = 3) -> str:
    """The short headline table printed when a run ends: per dataset, adapters x first headline metrics."""
    out = [subset_line(subset)] if subset else []
    top = summary[(summary.split == TOP["split"]) & (summary.group_by == TOP["group_by"])]
    for dataset, record in records.items():
        rows = top[top.dataset == dataset]
        metrics = [m for m in record.headlines if m in set(rows.metric)][:metrics_per_dataset]
        if not metrics:
            continue
        width = max([len("adapter")] + [len(a) for a in rows.adapter])
        body = {adapter: [_console_cell(rows, adapter, m) for m in metrics] for adapter in dict.fromkeys(rows.adapter)}
        cell = max([26] + [len(c) for cells in body.values() for c in cells])
        out += ["", f"{dataset} ({record.kind}, {int(rows.n.max())} questions, 95% CI by {_first(rows, 'unit', 'question')})",
                "  " + "adapter".ljust(width) + "".join(f"  {m:>{cell}}" for m in metrics)]
        out += ["  " + adapter.ljust(width) + "".join(f"  {c:>{cell}}" for c in cells) for adapter, cells in body.items()]
    return "\n".join(out).lstrip("\n") + "\n"


def _console_cell(rows: pd.DataFrame, adapter: str, metric: str) -> str:
    hit = rows[(rows.adapter == adapter) & (rows.metric == metric)]
    r = hit.iloc[0] if not hit.empty else None
    if r is None or math.isnan(r["mean"]):
        return "—"
    return f"{r['mean']:.3f} {ci_text(r.ci_lo, r.ci_hi, r.get('unit', 'question'))}"
def run_provenance(infos: Mapping[str, dict], config: Mapping | None) -> dict:
    """What made the figures: membench's version and commit, each dataset's source files (name -> sha256, from
    its normalization.json) and the config after defaults."""
    return {"code": {"membench": __version__, "commit": git_commit(REPO)},
            "data": {d: {Path(p).name: digest for p, digest in info.get("sources", {}).items()}
                     for d, info in infos.items()},
            "config": dict(config) if config is not None else None}


def write_artifacts(summary: pd.DataFrame, significance: pd.DataFrame, records: Mapping[str, Benchmark], baseline: str,
                    summary_path: Path, table_paths: Mapping[str, Path], headline_path: Path,
                    subset: Mapping | None = None, leave_out: Sequence[str] = (),
                    normalization_paths: Mapping[str, Path] | None = None, config: Mapping | None = None,
                    manifest_paths: Sequence[Path] = (), efficiency_paths: Sequence[Path] = ()) -> list[Path]:
    """summary.json (with each dataset's gold counts, read from ``normalization_paths``: dataset -> its
    normalization.json; the run's provenance and environment, the latter with the embed jobs' records from
    ``manifest_paths``), one .tex table per dataset (``table_paths``: dataset -> its path) and the console
    headline text; returns the paths written."""
    written = [summary_path, headline_path]
    infos = {d: json.loads(Path(p).read_text(encoding="utf-8")) for d, p in (normalization_paths or {}).items()}
    gold = {d: info.get("gold") for d, info in infos.items()}
    counts = {d: info.get("counts") for d, info in infos.items()}
    efficiency = {(r := json.loads(Path(p).read_text(encoding="utf-8")))["dataset"]: r for p in efficiency_paths}
    atomic_write_text(summary_path, summary_json(summary, records, subset, gold, counts, run_provenance(infos, config),
                                                 run_environment(manifest_paths), efficiency, significance))
    atomic_write_text(headline_path, console_table(summary, records, subset))
    for dataset, record in records.items():
        path = Path(table_paths[dataset])
        atomic_write_text(path, latex_table(dataset, record, summary, significance, baseline, subset, leave_out))
        written.append(path)
    return written


def per_question_frame(score_files: Mapping[str, list[Path | pd.DataFrame]]) -> pd.DataFrame:
    """One row per question x adapter, one column per metric (the wide table for spreadsheets); score files, or
    their tables already read."""
    frames = []
    for adapter, paths in score_files.items():
        scores = pd.concat([read_table(p) for p in paths], ignore_index=True)
        wide = scores.pivot(index="question_id", columns="metric", values="value")
        meta = scores.drop_duplicates("question_id").set_index("question_id")[["split", "question_type", "tier", "skip"]]
        frames.append(meta.join(wide).reset_index().assign(adapter=adapter))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    first = ["question_id", "adapter", "split", "question_type", "tier", "skip"]
    return out[first + [c for c in out.columns if c not in first]] if not out.empty else out


def write_per_question(frame: pd.DataFrame, parquet_path: Path, csv_path: Path, subset: Mapping | None = None) -> None:
    """The per-question table as Parquet and as CSV (a subset run's CSV opens with a `# SUBSET RUN` line)."""
    atomic_write_parquet(frame, Path(parquet_path))
    head = f"# {subset_line(subset)}\n" if subset else ""
    atomic_write_text(Path(csv_path), head + frame.to_csv(index=False))
