"""What retrieval buys in answer mode: each QA'd run's retrieval and answer figures side by side (never one column
mixing them), its accuracy with the evidence in its top k and without, and its paired tests against the QA baselines
(no-memory, oracle, full-context: :mod:`membench.qa.baselines`), for the report and summary.json."""

from __future__ import annotations

import math

import pandas as pd

from membench.qa.baselines import FULL_CONTEXT, NO_MEMORY, ORACLE
from membench.report.headlines import diff_text, json_cell, with_ci
from membench.report.markdown import table
from membench.scoring.qa import ACCURACY_EVIDENCE_IN, ACCURACY_EVIDENCE_MISSED, EVIDENCE_IN

__all__ = ["answers_section", "answers_json"]

ACCURACY = "qa/accuracy"
REFERENCES = (NO_MEMORY, ORACLE, FULL_CONTEXT)  # the order of the report's columns
FIGURES = {"evidence_in_top_k": EVIDENCE_IN, "accuracy": ACCURACY, "accuracy_evidence_in": ACCURACY_EVIDENCE_IN,
           "accuracy_evidence_missed": ACCURACY_EVIDENCE_MISSED}


def _top(summary: pd.DataFrame, dataset: str) -> pd.DataFrame:
    return summary[(summary.dataset == dataset) & (summary.split == "all") & (summary.group_by == "all")]


def _systems(top: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(the QA'd runs, the QA baselines present) of one dataset's summary rows."""
    answered = list(dict.fromkeys(top[top.metric == ACCURACY].adapter))
    refs = [r for r in REFERENCES if r in answered]
    return [a for a in answered if a not in REFERENCES], refs


def _tests(significance: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The paired tests of accuracy against each QA reference (split `all`), indexed by (adapter, reference)."""
    sig = significance[(significance.dataset == dataset) & (significance.split == "all")
                       & (significance.metric == ACCURACY) & significance.baseline.isin(REFERENCES)
                       & (significance.family.astype(str) == dataset + "/all/vs-" + significance.baseline.astype(str))]
    return sig.set_index(["adapter", "baseline"])


def _row(top: pd.DataFrame, adapter: str, metric: str):
    hit = top[(top.adapter == adapter) & (top.metric == metric)]
    return None if hit.empty else next(hit.itertuples())


def _cell(top: pd.DataFrame, adapter: str, metric: str, with_n: bool = False) -> str:
    r = _row(top, adapter, metric)
    if r is None:
        return "—"
    text = with_ci(r.mean, r.ci_lo, r.ci_hi, getattr(r, "unit", "question"))
    return f"{text} (n={int(r.n)})" if with_n else text


def _diff(tests: pd.DataFrame, adapter: str, reference: str) -> str:
    if (adapter, reference) not in tests.index:
        return "—"
    r = tests.loc[(adapter, reference)]
    star = " *" if not math.isnan(r.p_holm) and r.p_holm <= 0.05 else ""
    return diff_text(r.mean_diff, r.ci_lo, r.ci_hi, r.unit, r.p_holm) + star


def answers_section(summary: pd.DataFrame, significance: pd.DataFrame, datasets: list[str]) -> str:
    """The report's section, one table per dataset with QA runs; empty when no dataset has any."""
    parts = []
    for dataset in datasets:
        top = _top(summary, dataset)
        runs, refs = _systems(top)
        if not runs and not refs:
            continue
        tests = _tests(significance, dataset)
        header = ["system", "evidence in top k [95% CI] (retrieval)", "accuracy [95% CI]",
                  "accuracy, evidence in top k", "accuracy, evidence missed"] + [f"accuracy − {r}" for r in refs]
        figures = (EVIDENCE_IN, ACCURACY, ACCURACY_EVIDENCE_IN, ACCURACY_EVIDENCE_MISSED)
        body = [[a] + [_cell(top, a, m, True) for m in figures]
                + [_diff(tests, a, r) for r in refs] for a in runs]
        body += [[r, "—", _cell(top, r, ACCURACY, True), "—", "—"] + ["—"] * len(refs) for r in refs]
        parts += [f"#### {dataset}", "", table(header, body, numeric=(1, 2, 3, 4)), ""]
    if not parts:
        return ""
    return "\n".join([
        "### What retrieval buys (answer mode)", "",
        "Retrieval and answer figures sit in separate columns. *Evidence in top k* is the share of questions whose "
        "every gold item is in the run's top k at the granularity QA reads (counted over the questions with a "
        "verdict and gold). The two conditional accuracies split those questions by it. They show where the "
        "answers come from, not what retrieval causes: questions whose evidence is easy to find may be easy to "
        "answer too. Baselines: `no-memory` is the question alone, `oracle` only the sessions holding the gold "
        "evidence, `full-context` the whole history. Each difference is the run's accuracy minus the baseline's "
        "over the same questions, with its 95% bootstrap CI. Its p is the paired sign-flip test, Holm-adjusted "
        "over that baseline's family (every run against it, per split; * = adjusted p ≤ 0.05). Every split and "
        "metric is in `results/significance.parquet` (families `vs-<baseline>`).", "", *parts])


def answers_json(summary: pd.DataFrame, significance: pd.DataFrame, dataset: str) -> dict | None:
    """summary.json's `answers` entry of one dataset: each QA'd run's figures and its tests against each baseline,
    each baseline's accuracy; None without QA."""
    top = _top(summary, dataset)
    runs, refs = _systems(top)
    if not runs and not refs:
        return None
    tests = _tests(significance, dataset)
    out: dict = {"runs": {}, "baselines": {}}
    for a in runs:
        figures = {name: json_cell(r) for name, metric in FIGURES.items() if (r := _row(top, a, metric)) is not None}
        vs = {}
        for ref in refs:
            if (a, ref) in tests.index:
                t = tests.loc[(a, ref)]
                vs[ref] = {k: (None if math.isnan(float(t[k])) else round(float(t[k]), 6))
                           for k in ("mean_diff", "ci_lo", "ci_hi", "p_value", "p_holm")} | {"n": int(t.n)}
        out["runs"][a] = {**figures, "vs": vs}
    for ref in refs:
        out["baselines"][ref] = {"accuracy": json_cell(_row(top, ref, ACCURACY))}
    return out
