"""The report's per-dataset result tables: headline metrics with CIs, splits, groups, paired tests."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from membench.analysis.aggregate import against_baseline
from membench.runs.ablation import ABLATION_RUNS
from membench.benchmarks.record import Benchmark
from membench.report.headlines import ci_text, p_text, with_ci
from membench.report.markdown import table


def _cell(rows: pd.DataFrame, adapter: str, metric: str, split: str = "all", group: str | None = None) -> str:
    """The mean with its CI of one summary row (split `all`'s whole split, or one question group), or a dash."""
    where = (rows.group == group) if group is not None else (rows.group_by == "all")
    hit = rows[(rows.adapter == adapter) & (rows.metric == metric) & (rows.split == split) & where]
    if hit.empty:
        return "—"
    r = hit.iloc[0]
    return with_ci(r["mean"], r.ci_lo, r.ci_hi, r.get("unit", "question"))


def results_section(dataset: str, record: Benchmark, summary: pd.DataFrame, significance: pd.DataFrame,
                    metas: dict[str, dict], baseline: str, ablation: Sequence[str] = ()) -> str:
    everything = summary[summary.dataset == dataset]
    rows = everything[~everything.adapter.isin(list(ablation))]
    adapters = list(dict.fromkeys(rows.adapter))
    heads = [m for m in record.headlines if m in set(rows.metric)]
    mark = lambda a: f"{a} †" if metas.get(a, {}).get("uses_metadata") else a  # noqa: E731
    first = rows[(rows.split == "all") & (rows.group_by == "all")]
    n = int(first.n.max()) if not first.empty else 0
    skipped = int(first.n_skipped.max()) if not first.empty else 0
    parts = [f"#### Retrieval — split `all` ({n} questions scored, {skipped} skipped)", "", resampling_note(first), "",
             table(["adapter"] + heads, [[mark(a)] + [_cell(rows, a, m) for m in heads] for a in adapters],
                   numeric=tuple(range(1, len(heads) + 1))), ""]
    if any(metas.get(a, {}).get("uses_metadata") for a in adapters):
        parts += ["† reads oracle-ish question metadata (" + "; ".join(
            f"{a}: {', '.join(metas[a]['uses_metadata'])}" for a in adapters if metas.get(a, {}).get("uses_metadata"))
            + ")", ""]
    if any(str(metas.get(a, {}).get("facts") or "").endswith("observation") for a in adapters):
        parts += ["`+facts` runs here index LoCoMo's own `observation` facts (zero model calls). They were written "
                  "by the dataset's authors from the same conversations its questions were built from, so read "
                  "their gain as an upper bound of what extracted facts give.", ""]
    if skipped:
        parts += ["Skipped questions have no gold to score against (or the benchmark's own scorer leaves them out) "
                  "and are left out of every mean; the data section below counts them by reason.", ""]
    metric = heads[0] if heads else None
    if metric:
        parts += [f"#### Tune vs holdout — `{metric}` (tune = even question index, holdout = odd)", "",
                  table(["adapter", "tune", "holdout", "all"],
                        [[mark(a)] + [_cell(rows, a, metric, s) for s in ("tune", "holdout", "all")] for a in adapters],
                        numeric=(1, 2, 3)), ""]
    parts += _group_table(rows, adapters, record.breakdown)
    sig = against_baseline(significance[significance.dataset == dataset])
    parts += _significance_table(sig[~sig.adapter.isin(list(ablation))], heads, baseline)
    parts += _ablation_table(everything, sig, heads, baseline, ablation)
    return "\n".join(parts)


def _group_table(rows: pd.DataFrame, adapters: list[str], metric: str) -> list[str]:
    groups = rows[(rows.group_by != "all") & (rows.metric == metric)]
    if groups.empty:
        return []
    out = []
    for group_by, part in groups.groupby("group_by"):
        names = sorted(set(part.group))
        ns = part.groupby("group").n.max()
        body = []
        for a in adapters:
            cells = []
            for g in names:
                cells.append(_cell(part, a, metric, group=g))
            body.append([a] + cells)
        out += [f"#### `{metric}` by {group_by.replace('_', ' ')} (split `all`)", "",
                table(["adapter"] + [f"{g} (n={int(ns[g])})" for g in names], body,
                      numeric=tuple(range(1, len(names) + 1))), ""]
    return out


UNIT_NOTE = {"question": "questions (each question an independent unit)",
             "conversation": "conversations, then questions within each drawn conversation (a two-stage "
                             "bootstrap; paired tests flip a conversation's questions together). LoCoMo's "
                             "questions come from few conversations (1,986 from 10 in locomo10), so questions are "
                             "not independent"}
ONE_UNIT_NOTE = (" This run's figures rest on a single {unit}, so they have no {unit}-level CI (a bootstrap needs "
                 "two units to show any spread: the cells say `n/a: 1 {unit}`) and no paired test can find a "
                 "difference (p = 1).")
ONE_CLUSTER_HINT = " `report.cluster_bootstrap: false` resamples its questions instead."


def resampling_note(rows: pd.DataFrame) -> str:
    """Which unit the dataset's CIs and tests resample, in words, and why there are no CIs when the whole
    split rests on one unit (a one-conversation LoCoMo file)."""
    units = sorted(set(rows.unit)) if "unit" in rows and not rows.empty else ["question"]
    note = "Resampling unit: " + "; ".join(UNIT_NOTE.get(u, u) for u in units) + "."
    top = rows[(rows.split == "all") & rows["mean"].notna()] if {"split", "mean"} <= set(rows) else rows.iloc[:0]
    if not top.empty and top.ci_lo.isna().all():  # no CI at all in split `all`: one unit (stats.bootstrap_matrix)
        unit = str(top.unit.iloc[0]) if "unit" in top else "question"
        note += ONE_UNIT_NOTE.format(unit=unit) + (ONE_CLUSTER_HINT if unit != "question" else "")
    return note


def _significance_table(sig: pd.DataFrame, heads: list[str], baseline: str, split: str = "all") -> list[str]:
    """One row per adapter x headline metric: difference to the baseline [95% CI], raw and Holm p, wins/ties/losses."""
    sig = sig[sig.metric.isin(heads) & (sig.split == split)]
    if sig.empty:
        return []
    order = {m: i for i, m in enumerate(heads)}
    sig = sig.assign(_o=sig.metric.map(order)).sort_values(["adapter", "_o"], kind="stable")
    body = [[r.adapter, r.metric, f"{r.mean_diff:+.4f} {ci_text(r.ci_lo, r.ci_hi, getattr(r, 'unit', 'question'), '+.3f')}", p_text(r.p_value),
             p_text(r.p_holm) + (" *" if r.p_holm <= 0.05 else ""), f"{r.wins}/{r.ties}/{r.losses}"]
            for r in sig.itertuples()]
    size = int(sig.family_size.max())
    return [f"#### Paired tests against `{baseline}` — split `{split}`", "",
            f"Mean difference (adapter − baseline) over the same questions with its 95% bootstrap CI; two-sided "
            f"paired sign-flip randomisation p-value, raw and Holm–Bonferroni adjusted over this table's family "
            f"(the {size} tests of {sig.adapter.nunique()} adapters × {sig.metric.nunique()} headline metrics; "
            f"* = adjusted p ≤ 0.05); wins/ties/losses count questions where the adapter scores above / equal to / "
            f"below the baseline. {resampling_note(sig)} Every split and metric is in "
            "`results/significance.parquet` (other metrics form their own family per split).", "",
            table(["adapter", "metric", "difference [95% CI]", "p", "p (Holm)", "W/T/L"], body,
                  numeric=(2, 3, 4, 5)), ""]


def _ablation_table(rows: pd.DataFrame, sig: pd.DataFrame, metrics: list[str], baseline: str,
                    ablation: Sequence[str]) -> list[str]:
    """Each layer alone and all together: mean, difference to the baseline and Holm p (ablation family)."""
    names = [a for a in ablation if a in set(rows.adapter)]
    if not names or not metrics:
        return []
    order = names + [a for a in dict.fromkeys(ABLATION_RUNS[n][2] for n in names) if a in set(rows.adapter)]
    body = []
    for adapter in order:
        cells = []
        for metric in metrics:
            hit = sig[(sig.adapter == adapter) & (sig.metric == metric) & (sig.split == "all")]
            mean = _cell(rows, adapter, metric).split(" [")[0]
            cells.append(mean if hit.empty else
                         f"{mean} ({hit.iloc[0].mean_diff:+.4f}, p_Holm {p_text(hit.iloc[0].p_holm)})")
        body.append([adapter if adapter in names else f"{adapter} (all layers)"] + cells)
    family = sig[sig.adapter.isin(names) & (sig.split == "all") & sig.metric.isin(metrics)]
    size = int(family.family_size.max()) if not family.empty else 0
    return [f"#### Ablation: one layer at a time against `{baseline}` — split `all`", "",
            f"Each `-only` run is `bm25-v2` with every layer off (`bm25-v2-no-layers`: stopword-free, unstemmed "
            f"BM25) but one, or `bm25-time` with one of its two layers; the last rows are the full adapters. "
            f"Cells: mean (difference to `{baseline}`, Holm-adjusted p). The ablation runs form their own Holm "
            f"family ({size} tests: runs × headline metrics); the full adapters' p come from the main family.", "",
            table(["run"] + metrics, body, numeric=tuple(range(1, len(metrics) + 1))), ""]
