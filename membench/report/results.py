"""The report's per-dataset result tables: headline metrics with CIs, splits, groups, paired tests."""

from __future__ import annotations

import pandas as pd

from membench.report.headlines import BREAKDOWN, HEADLINES, with_ci
from membench.report.markdown import table


def _cell(rows: pd.DataFrame, adapter: str, metric: str, split: str = "all") -> str:
    hit = rows[(rows.adapter == adapter) & (rows.metric == metric) & (rows.split == split) & (rows.group_by == "all")]
    if hit.empty:
        return "—"
    r = hit.iloc[0]
    return with_ci(r["mean"], r.ci_lo, r.ci_hi)


def results_section(dataset: str, kind: str, summary: pd.DataFrame, significance: pd.DataFrame,
                    metas: dict[str, dict], baseline: str) -> str:
    rows = summary[summary.dataset == dataset]
    adapters = list(dict.fromkeys(rows.adapter))
    heads = [m for m in HEADLINES[kind] if m in set(rows.metric)]
    mark = lambda a: f"{a} †" if metas.get(a, {}).get("uses_metadata") else a  # noqa: E731
    first = rows[(rows.split == "all") & (rows.group_by == "all")]
    n = int(first.n.max()) if not first.empty else 0
    skipped = int(first.n_skipped.max()) if not first.empty else 0
    parts = [f"#### Retrieval — split `all` ({n} questions scored, {skipped} skipped)", "",
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
        parts += ["Skipped questions are left out of every mean as the benchmark's own scorer does "
                  "(LongMemEval: abstention `_abs` questions and questions without a user-side evidence turn).", ""]
    metric = heads[0] if heads else None
    if metric:
        parts += [f"#### Tune vs holdout — `{metric}` (tune = even question index, holdout = odd)", "",
                  table(["adapter", "tune", "holdout", "all"],
                        [[mark(a)] + [_cell(rows, a, metric, s) for s in ("tune", "holdout", "all")] for a in adapters],
                        numeric=(1, 2, 3)), ""]
    parts += _group_table(rows, adapters, BREAKDOWN[kind])
    parts += _significance_table(significance[significance.dataset == dataset], heads, baseline)
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
                hit = part[(part.adapter == a) & (part.group == g)]
                cells.append(with_ci(*hit.iloc[0][["mean", "ci_lo", "ci_hi"]]) if not hit.empty else "—")
            body.append([a] + cells)
        out += [f"#### `{metric}` by {group_by.replace('_', ' ')} (split `all`)", "",
                table(["adapter"] + [f"{g} (n={int(ns[g])})" for g in names], body,
                      numeric=tuple(range(1, len(names) + 1))), ""]
    return out


def _significance_table(sig: pd.DataFrame, heads: list[str], baseline: str, split: str = "all") -> list[str]:
    """Adapter rows x the first headline metrics: difference to the baseline [95% CI], p."""
    metrics = heads[:3]
    sig = sig[sig.metric.isin(metrics) & (sig.split == split)]
    if sig.empty:
        return []
    body = []
    for adapter, part in sig.groupby("adapter", sort=False):
        cells = []
        for metric in metrics:
            hit = part[part.metric == metric]
            if hit.empty:
                cells.append("—")
                continue
            r = hit.iloc[0]
            p = f"p={r.p_value:.4f}" if r.p_value == r.p_value else "p=n/a"
            cells.append(f"{r.mean_diff:+.4f} [{r.ci_lo:+.3f}, {r.ci_hi:+.3f}] {p}")
        body.append([adapter] + cells)
    return [f"#### Paired tests against `{baseline}` — split `{split}`", "",
            "Mean difference (adapter − baseline) over the same questions with its 95% bootstrap CI, and the "
            "two-sided paired sign-flip randomisation p-value. Every split and metric is in "
            "`results/significance.parquet`.", "",
            table(["adapter"] + metrics, body, numeric=tuple(range(1, len(metrics) + 1))), ""]
