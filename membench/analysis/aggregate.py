"""Per-question scores -> means with 95% bootstrap CIs, per split and per question group, and paired tests of
every adapter against the baseline (validity rule 5), Holm-corrected per comparison table.

All columns of a dataset (adapter x metric x question slice) are resampled together (membench.analysis.stats), so the
numbers equal those of resampling each column on its own with the same seed, in a fraction of the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from membench.benchmarks.record import Benchmark
from membench.analysis.stats import bootstrap_matrix, holm, paired_matrix
from membench.io import read_table

SPLITS = ("all", "tune", "holdout")
GROUP_COLUMNS = ("question_type", "tier")
SUMMARY_COLUMNS = ["dataset", "adapter", "split", "group_by", "group", "metric", "mean", "ci_lo", "ci_hi", "n",
                   "n_skipped", "unit"]
SIGNIFICANCE_COLUMNS = ["dataset", "adapter", "baseline", "split", "metric", "mean_diff", "ci_lo", "ci_hi",
                        "p_value", "family", "family_size", "p_holm", "wins", "ties", "losses", "n", "unit"]


@dataclass(frozen=True)
class Resampling:
    """How a dataset's questions are resampled: one unit per question, or one per cluster of questions."""

    unit: str = "question"
    clusters: pd.Series | None = None  # question_id -> cluster label (None: question unit)

    def labels(self, question_ids: pd.Index) -> np.ndarray | None:
        if self.clusters is None:
            return None
        labels = self.clusters.reindex(question_ids)
        if labels.isna().any():
            missing = list(question_ids[labels.isna().to_numpy()][:3])
            raise ValueError(f"no {self.unit} known for questions {missing} (questions table out of date?)")
        return labels.astype(str).to_numpy()


def resampling_for(record: Benchmark, questions: pd.DataFrame, cluster: bool = True) -> Resampling:
    """The dataset's resampling unit: the cluster its benchmark record names (LoCoMo: the haystack, 10
    conversations, whose questions share it), else the question."""
    if not cluster or record.cluster is None:
        return Resampling()
    unit, column = record.cluster
    return Resampling(unit, questions.set_index("question_id")[column])


@dataclass
class _Columns:
    """Column vectors over one dataset's questions and the row describing each."""

    index: pd.Index
    values: list[np.ndarray]
    rows: list[dict]

    def add(self, row: dict, values: np.ndarray) -> None:
        self.rows.append(row)
        self.values.append(values)

    def matrix(self) -> np.ndarray:
        return np.column_stack(self.values) if self.values else np.empty((len(self.index), 0))


def _wide(scores: pd.DataFrame, index: pd.Index) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(values, has a row): question x metric over `index`, counted (not skipped) rows only."""
    counted = scores[scores.skip.isna()]
    values = counted.pivot(index="question_id", columns="metric", values="value").reindex(index)
    present = counted.assign(one=1.0).pivot(index="question_id", columns="metric", values="one").reindex(index)
    return values.astype(float), present.notna()


def _slices(scores: pd.DataFrame, index: pd.Index) -> list[tuple[str, str, str, np.ndarray, int]]:
    """(split, group_by, group, row mask over `index`, questions skipped) for every split and question group."""
    counted = scores[scores.skip.isna()].drop_duplicates("question_id").set_index("question_id")
    skipped = scores[scores.skip.notna()].drop_duplicates("question_id")
    split = counted.split.reindex(index)
    # a question every metric skips (LongMemEval's abstention ones) is not counted: NA here, in no slice
    out = [(s, "all", "all", (split.eq(s) if s != "all" else split.notna()).to_numpy(dtype=bool, na_value=False),
            int(skipped.question_id.nunique() if s == "all" else (skipped.split == s).sum())) for s in SPLITS]
    for column in GROUP_COLUMNS:
        if counted[column].notna().any():
            labels = counted[column].reindex(index)
            for group in sorted(counted[column].dropna().unique()):
                out.append(("all", column, group, labels.eq(group).to_numpy(dtype=bool, na_value=False),
                            int((skipped[column] == group).sum())))
    return out


def _summary_columns(dataset: str, loaded: Mapping[str, pd.DataFrame], index: pd.Index, unit: str) -> _Columns:
    cols = _Columns(index, [], [])
    for adapter, scores in loaded.items():
        values, present = _wide(scores, index)
        metrics = sorted(values.columns)
        matrix, has = values[metrics].to_numpy(), present[metrics].to_numpy()
        for split, group_by, group, mask, n_skipped in _slices(scores, index):
            for j, metric in enumerate(metrics):
                if not (has[:, j] & mask).any():
                    continue
                cols.add({"dataset": dataset, "adapter": adapter, "split": split, "group_by": group_by,
                          "group": group, "metric": metric, "n_skipped": n_skipped, "unit": unit},
                         np.where(mask, matrix[:, j], np.nan))
    return cols


def summarize_dataset(dataset: str, loaded: Mapping[str, pd.DataFrame], resamples: int, seed: int,
                      resampling: Resampling = Resampling()) -> pd.DataFrame:
    """Summary rows of every adapter of one dataset (adapter -> its concatenated score rows)."""
    index = _question_index(loaded.values())
    cols = _summary_columns(dataset, loaded, index, resampling.unit)
    r = bootstrap_matrix(cols.matrix(), resamples, 0.95, seed, resampling.labels(index))
    out = pd.DataFrame(cols.rows, columns=[c for c in SUMMARY_COLUMNS if c not in ("mean", "ci_lo", "ci_hi", "n")])
    out = out.assign(mean=r["mean"], ci_lo=r["lo"], ci_hi=r["hi"], n=r["n"].astype(int))
    return out[SUMMARY_COLUMNS]


def compare_dataset(dataset: str, loaded: Mapping[str, pd.DataFrame], baseline: str, resamples: int, seed: int,
                    resampling: Resampling = Resampling(), headline: Sequence[str] = (),
                    ablation: Sequence[str] = (), family: str | None = None) -> pd.DataFrame:
    """Paired tests of every adapter against `baseline` per split and metric, with Holm's correction over each
    family: per split, the adapters x headline metrics (the report's comparison table) and the adapters x all
    other metrics; the `ablation` runs form their own two families (ablation-headline, ablation-other). A
    `family` name puts every test of a split in one family of that name instead."""
    if baseline not in loaded:
        return pd.DataFrame(columns=SIGNIFICANCE_COLUMNS)
    index = _question_index(loaded.values()).sort_values()  # the order paired tests have always used
    base = _wide(loaded[baseline], index)[0].dropna(axis=1, how="all")
    rows, a_cols, b_cols = [], [], []
    for adapter, scores in loaded.items():
        if adapter == baseline:
            continue
        values = _wide(scores, index)[0].dropna(axis=1, how="all")
        split = scores.drop_duplicates("question_id").set_index("question_id").split.reindex(index)
        for s in SPLITS:
            # a run that answered some questions only (the full-context QA baseline) has no split for the rest
            mask = (split.notna() if s == "all" else split.eq(s).fillna(False)).to_numpy(dtype=bool)
            metrics = sorted(set(values.columns) & set(base.columns))
            rows += [{"dataset": dataset, "adapter": adapter, "baseline": baseline, "split": s, "metric": metric,
                      "unit": resampling.unit} for metric in metrics]
            a_cols.append(np.where(mask[:, None], values[metrics].to_numpy(), np.nan))
            b_cols.append(np.where(mask[:, None], base[metrics].to_numpy(), np.nan))
    if not rows:
        return pd.DataFrame(columns=SIGNIFICANCE_COLUMNS)
    r = paired_matrix(np.hstack(a_cols), np.hstack(b_cols), resamples, seed, resampling.labels(index))
    out = pd.DataFrame(rows).assign(mean_diff=r["mean_diff"], ci_lo=r["lo"], ci_hi=r["hi"], p_value=r["p_value"],
                                    wins=r["wins"], ties=r["ties"], losses=r["losses"], n=r["n"].astype(int))
    kind = np.char.add(np.where(out.adapter.isin(list(ablation)), "ablation-", ""),
                       np.where(out.metric.isin(list(headline)), "headline", "other"))
    out["family"] = out.dataset + "/" + out.split + "/" + (family if family is not None else kind)
    out["family_size"] = out.groupby("family").p_value.transform(lambda p: int(p.notna().sum()))
    out["p_holm"] = out.groupby("family").p_value.transform(lambda p: pd.Series(holm(p.to_numpy()), p.index))
    return out[SIGNIFICANCE_COLUMNS]


def against_baseline(significance: pd.DataFrame) -> pd.DataFrame:
    """The significance rows against the configured baseline, without the QA references' families (`vs-...`); a
    table without families (written by hand, or before them) has only those rows."""
    if "family" not in significance:
        return significance
    return significance[~significance.family.astype(str).str.rsplit("/", n=1).str[-1].str.startswith("vs-")]


def _question_index(frames: Iterable[pd.DataFrame]) -> pd.Index:
    return pd.Index(pd.unique(pd.concat([f.question_id for f in frames], ignore_index=True)), name="question_id")


def aggregate(score_files: Iterable[tuple[str, str, Path | pd.DataFrame]], baseline: str, resamples: int = 10000,
              seed: int = 0, resampling: Mapping[str, Resampling] | None = None,
              headlines: Mapping[str, Sequence[str]] | None = None,
              ablation: Sequence[str] = (), references: Sequence[str] = ()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """score_files: (dataset, adapter, path or its table), several per pair allowed (retrieval, extended-pool and QA
    scores carry distinct metric names). `resampling` and `headlines` are per dataset (defaults: question
    unit; no headline family). Every other adapter is also tested against each of the `references` present (the
    QA baselines, on the metrics they share: the answer figures), one Holm family per reference and split
    (`vs-<reference>`). Returns (summary, significance)."""
    parts: dict[str, dict[str, list[pd.DataFrame]]] = {}
    for d, a, p in score_files:
        parts.setdefault(d, {}).setdefault(a, []).append(read_table(p))
    summary, significance = [], []
    for dataset, adapters in parts.items():
        loaded = {a: pd.concat(frames, ignore_index=True) for a, frames in adapters.items()}
        how = (resampling or {}).get(dataset, Resampling())
        summary.append(summarize_dataset(dataset, loaded, resamples, seed, how))
        significance.append(compare_dataset(dataset, loaded, baseline, resamples, seed, how,
                                            (headlines or {}).get(dataset, ()), ablation))
        for reference in (r for r in references if r in loaded and r != baseline):
            against = {a: s for a, s in loaded.items() if a == reference or a not in references}
            significance.append(compare_dataset(dataset, against, reference, resamples, seed, how,
                                                family=f"vs-{reference}"))
    return (_concat(summary, SUMMARY_COLUMNS), _concat(significance, SIGNIFICANCE_COLUMNS))


def aggregate_datasets(score_files: Iterable[tuple[str, str, Path]], questions: Mapping[str, Path],
                       records: Mapping[str, Benchmark], baseline: str, resamples: int, seed: int,
                       cluster: bool = True, ablation: Sequence[str] = (), references: Sequence[str] = ()
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The workflow's aggregate: each dataset resampled by its own unit, Holm families from its headlines, the
    `references` (QA baselines) each a family of its own."""
    resampling = {d: resampling_for(records[d], pd.read_parquet(path), cluster) for d, path in questions.items()}
    headlines = {d: record.headlines for d, record in records.items()}
    return aggregate(score_files, baseline, resamples, seed, resampling, headlines, ablation, references)


def concat_tables(paths: Iterable[str | Path], columns: list[str]) -> pd.DataFrame:
    """Per-dataset tables (Parquet files), in the given order, as one table."""
    return _concat([pd.read_parquet(p) for p in paths], columns)


def _concat(frames: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
