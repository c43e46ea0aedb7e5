"""Per-question scores -> means with 95% bootstrap CIs, per split and per question group, and paired
tests of every adapter against the baseline (validity rule 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from membench.stats import bootstrap_ci, paired_test

SPLITS = ("all", "tune", "holdout")
SUMMARY_COLUMNS = ["dataset", "adapter", "split", "group_by", "group", "metric", "mean", "ci_lo", "ci_hi", "n",
                   "n_skipped"]
SIGNIFICANCE_COLUMNS = ["dataset", "adapter", "baseline", "split", "metric", "mean_diff", "ci_lo", "ci_hi",
                        "p_value", "n"]


def in_split(scores: pd.DataFrame, split: str) -> pd.DataFrame:
    return scores if split == "all" else scores[scores.split == split]


def summarize(dataset: str, adapter: str, scores: pd.DataFrame, resamples: int, seed: int) -> list[dict]:
    """Rows for every split (over all questions) and every question group (over split `all`)."""
    counted = scores[scores.skip.isna()]
    skipped = scores[scores.skip.notna()]
    rows = []
    slices: list[tuple[str, str, str, pd.DataFrame, pd.DataFrame]] = [
        (split, "all", "all", in_split(counted, split), in_split(skipped, split)) for split in SPLITS]
    for column in ("question_type", "tier"):
        if counted[column].notna().any():
            for group, part in counted.groupby(column):
                slices.append(("all", column, group, part, skipped[skipped[column] == group]))
    for split, group_by, group, part, skip in slices:
        n_skipped = skip.question_id.nunique()
        for metric, values in part.groupby("metric", sort=True).value:
            mean, lo, hi = bootstrap_ci(values.to_numpy(), n_resamples=resamples, seed=seed)
            rows.append({"dataset": dataset, "adapter": adapter, "split": split, "group_by": group_by,
                         "group": group, "metric": metric, "mean": mean, "ci_lo": lo, "ci_hi": hi,
                         "n": int(values.notna().sum()), "n_skipped": n_skipped})
    return rows


def compare(dataset: str, adapter: str, baseline: str, scores: pd.DataFrame, base: pd.DataFrame,
            resamples: int, seed: int) -> list[dict]:
    """Paired randomisation test and bootstrap CI of (adapter - baseline) per split and metric."""
    rows = []
    a = scores[scores.skip.isna()].pivot_table(index="question_id", columns="metric", values="value")
    b = base[base.skip.isna()].pivot_table(index="question_id", columns="metric", values="value")
    split_of = scores.drop_duplicates("question_id").set_index("question_id").split
    for split in SPLITS:
        ids = a.index if split == "all" else a.index[split_of.reindex(a.index).eq(split).to_numpy()]
        ids = ids.intersection(b.index)
        for metric in sorted(set(a.columns) & set(b.columns)):
            test = paired_test(a.loc[ids, metric].to_numpy(), b.loc[ids, metric].to_numpy(),
                               n_resamples=resamples, seed=seed)
            rows.append({"dataset": dataset, "adapter": adapter, "baseline": baseline, "split": split,
                         "metric": metric, "mean_diff": test["mean_diff"], "ci_lo": test["lo"], "ci_hi": test["hi"],
                         "p_value": test["p_value"], "n": test["n"]})
    return rows


def aggregate(score_files: Iterable[tuple[str, str, Path]], baseline: str, resamples: int = 10000,
              seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """score_files: (dataset, adapter, path), several paths per pair allowed (retrieval, extended-pool and
    QA scores carry distinct metric names). Returns (summary, significance)."""
    parts: dict[tuple[str, str], list[pd.DataFrame]] = {}
    for d, a, p in score_files:
        parts.setdefault((d, a), []).append(pd.read_parquet(p))
    loaded = {key: pd.concat(frames, ignore_index=True) for key, frames in parts.items()}
    summary, significance = [], []
    for (dataset, adapter), scores in loaded.items():
        summary += summarize(dataset, adapter, scores, resamples, seed)
        base = loaded.get((dataset, baseline))
        if base is not None and adapter != baseline:
            significance += compare(dataset, adapter, baseline, scores, base, resamples, seed)
    return (pd.DataFrame(summary, columns=SUMMARY_COLUMNS), pd.DataFrame(significance, columns=SIGNIFICANCE_COLUMNS))
