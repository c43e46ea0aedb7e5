"""Efficiency beside quality, per dataset and run: search latency, tokens of the top k, recall within a token
budget, ingest time, store size, model calls and cost; the accuracy-vs-latency and accuracy-vs-tokens charts with
the Pareto front marked.

Rule efficiency (one job per dataset) aggregates every run's efficiency rows (`membench.scoring.efficiency`) with
the dataset's own resampling (means, 95% bootstrap CIs, paired tests against the baseline in families of their
own, so no other figure's Holm correction moves), and writes `results/<dataset>/efficiency/efficiency.json`, which
`summary.json` and the report carry. Accuracy is the benchmark's `breakdown` metric from the dataset's summary.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from membench.benchmarks.record import Benchmark
from membench.datasets.item_tokens import ENCODING
from membench.report.headlines import ci_text
from membench.report.markdown import table
from membench.scoring.efficiency import TOKEN_KS


def _overall(summary: pd.DataFrame, run: str, metric: str) -> dict[str, float] | None:
    row = summary[(summary.adapter == run) & (summary.metric == metric) & (summary.split == "all")
                  & (summary.group_by == "all")]
    if row.empty or pd.isna(row.iloc[0]["mean"]):
        return None
    r = row.iloc[0]
    # no CI (None, not NaN, which JSON cannot hold) when the mean rests on one resampling unit: the report says why
    return {"mean": round(float(r["mean"]), 6), "unit": str(r.get("unit", "question")),
            **{end: None if pd.isna(r[end]) else round(float(r[end]), 6) for end in ("ci_lo", "ci_hi")}}


def pareto(points: Mapping[str, tuple[float, float]]) -> list[str]:
    """The runs no other run beats: none has at least their accuracy at no more cost, and better in one of them.
    `points`: run -> (cost, accuracy)."""
    return [run for run, (cost, acc) in points.items()
            if not any(c <= cost and a >= acc and (c < cost or a > acc) for other, (c, a) in points.items()
                       if other != run)]


def _memory(meta: Mapping[str, Any], cost: Mapping[str, Any] | None) -> dict[str, Any]:
    mem = meta.get("memory")
    if not mem:
        return {"ingest_seconds_per_session": None, "store_mb": None, "model_calls": 0, "cost_usd": 0.0}
    calls = sum(c.get("calls", 0) for c in mem["model_calls"].values())
    spent = ((cost or {}).get("summary") or {}).get("total_usd") or 0.0
    return {"ingest_seconds_per_session": round(mem["ingest_seconds"] / mem["sessions_ingested"], 4)
            if mem["sessions_ingested"] else None, "store_mb": round(mem["store_bytes"] / 1e6, 3),
            "model_calls": calls, "cost_usd": round(float(spent), 6)}


def efficiency_record(dataset: str, record: Benchmark, metas: Mapping[str, Mapping[str, Any]],
                      costs: Mapping[str, Mapping[str, Any]], summary: pd.DataFrame,
                      eff_summary: pd.DataFrame) -> dict[str, Any]:
    """What efficiency.json holds for one dataset."""
    prefix = f"{record.granularities[0]}/" if len(record.granularities) > 1 else ""
    budget_metric, tokens_metric = f"{prefix}budget_recall@{record.token_budget}tok", f"{prefix}tokens@10"
    runs: dict[str, Any] = {}
    for run, meta in metas.items():
        runs[run] = {"k": meta.get("depth"), "latency_ms": meta.get("latency_ms"),
                     **_memory(meta, costs.get(run)),
                     "accuracy": _overall(summary, run, record.breakdown),
                     "tokens@k": {str(k): _overall(eff_summary, run, f"{prefix}tokens@{k}") for k in TOKEN_KS},
                     "budget_recall": _overall(eff_summary, run, budget_metric)}
    points = {name: r for name, r in runs.items() if r["accuracy"] and (r["latency_ms"] or {}).get("p50") is not None}
    fronts = {"latency": pareto({n: (r["latency_ms"]["p50"], r["accuracy"]["mean"]) for n, r in points.items()}),
              "tokens": pareto({n: (r["tokens@k"]["10"]["mean"], r["accuracy"]["mean"]) for n, r in points.items()
                                if r["tokens@k"]["10"]})}
    return {"dataset": dataset, "accuracy_metric": record.breakdown, "token_budget": record.token_budget,
            "budget_metric": budget_metric, "tokens_metric": tokens_metric, "tokenizer": ENCODING,
            "granularity": record.granularities[0], "pareto": fronts, "runs": runs}


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _ci(figure: Mapping[str, float] | None, digits: int = 3) -> str:
    if not figure:
        return "—"
    lo, hi = (math.nan if figure[end] is None else figure[end] for end in ("ci_lo", "ci_hi"))
    return f"{figure['mean']:.{digits}f} {ci_text(lo, hi, figure.get('unit', 'question'), f'.{digits}f')}"


def efficiency_section(records: Mapping[str, Mapping[str, Any]]) -> str:
    """The report's efficiency section: one table per dataset and its chart."""
    if not records:
        return ""
    out = ["## Efficiency beside quality", "",
           "Every run on a dataset was asked for the same k (stated below). Search latency is per `rank` call or "
           "memory `search` (milliseconds, this machine); tokens are cl100k_base tokens of the top-k results' text "
           "(what an agent pays to read them); budget recall is the share of a question's gold evidence in the "
           "whole results that fit in the dataset's token budget T, a session counting for the turns it holds, so "
           "systems returning turns, chunks or sessions meet on equal terms. Ingest time, store size, model calls "
           "and cost are memory systems' (— for adapters, which index at query time). ◆ marks the Pareto front "
           "(no run is as accurate for less).", ""]
    for dataset, rec in records.items():
        ks = sorted({str(r["k"]) for r in rec["runs"].values()})
        out += [f"### {dataset}", "",
                f"k = {', '.join(ks)}; accuracy: `{rec['accuracy_metric']}`; T = {rec['token_budget']:,} tokens "
                f"(`{rec['budget_metric']}`); tokens at {rec['granularity']} level.", ""]
        rows = []
        for run, r in rec["runs"].items():
            lat = r["latency_ms"] or {}
            front = "◆" if run in rec["pareto"]["latency"] or run in rec["pareto"]["tokens"] else ""
            tokens = r["tokens@k"]["10"]
            rows.append([f"{front} {run}".strip(), _ci(r["accuracy"]), _ci(r["budget_recall"]),
                         _fmt(tokens["mean"] if tokens else None, 0), _fmt(lat.get("p50"), 2),
                         _fmt(lat.get("p95"), 2), _fmt(lat.get("p99"), 2),
                         _fmt(r["ingest_seconds_per_session"], 3), _fmt(r["store_mb"], 1), f"{r['model_calls']:,}",
                         f"{r['cost_usd']:.4f}"])
        out += [table(["run", "accuracy (95% CI)", f"recall within {rec['token_budget']:,} tokens", "tokens@10",
                       "search p50 ms", "p95 ms", "p99 ms", "ingest s / session", "store MB", "model calls",
                       "cost $"], rows, numeric=(3, 4, 5, 6, 7, 8, 9, 10)), "",
                f"![{dataset} efficiency](plots/{dataset}_efficiency.png)", ""]
    return "\n".join(out)
