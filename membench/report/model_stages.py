"""Report sections for the opt-in model stages: answer-mode QA, the judge's extended pool, and costs.

Every function takes DataFrames (or Parquet/JSON paths) and returns Markdown. Means carry 95% percentile
bootstrap CIs over questions (:func:`membench.analysis.stats.bootstrap_ci`); questions without a verdict (failed,
budget, interrupted) are not counted as wrong but reported as "no verdict".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from membench.qa.calibration import calibration_summary
from membench.report.costs import cost_table
from membench.report.judge_trust import calibration_section, rate_ci, stability_section, versions_section
from membench.report.markdown import table
from membench.benchmarks.procedural.extended import PREFIX
from membench.analysis.stats import bootstrap_ci
from membench.io import read_table

__all__ = ["qa_section", "judge_section", "cost_section", "model_stages_markdown", "mean_ci"]

JUDGE_METRICS = ("P@10", "nDCG@10", "AP", "judged@5", "judged@10")


def mean_ci(values: Iterable[float], resamples: int = 10000, seed: int = 0) -> str:
    """``0.6500 [0.4500, 0.8500]`` (NaN dropped); ``n/a`` when there is no value."""
    arr = np.asarray([v for v in values if v is not None and not pd.isna(v)], dtype=float)
    if arr.size == 0:
        return "n/a"
    mean, lo, hi = bootstrap_ci(arr, n_resamples=resamples, seed=seed)
    if math.isnan(lo):
        return f"{mean:.4f}"
    return f"{mean:.4f} [{lo:.4f}, {hi:.4f}]"


def _accuracy_values(df: pd.DataFrame, column: str = "correct") -> list[float]:
    return [1.0 if bool(c) else 0.0 for c in df[column].dropna()] if column in df else []


def _without_errata(df: pd.DataFrame, resamples: int, seed: int) -> tuple[str, str] | None:
    """(accuracy, token F1) against the benchmark's own answers, when gold-label errata change either figure."""
    if "erratum" not in df or not df.erratum.notna().any():
        return None
    with_acc, without_acc = mean_ci(_accuracy_values(df), resamples, seed), mean_ci(
        _accuracy_values(df, "correct_upstream"), resamples, seed)
    with_f1 = mean_ci(df.f1, resamples, seed) if _has_f1(df) else ""
    without_f1 = mean_ci(df.f1_upstream, resamples, seed) if _has_f1(df) else ""
    if (with_acc, with_f1) == (without_acc, without_f1):
        return None
    return without_acc, without_f1


def _has_f1(df: pd.DataFrame) -> bool:
    return "f1" in df and df.f1.notna().any()


def qa_section(qa: Mapping[tuple[str, str], pd.DataFrame | str | Path], resamples: int = 10000, seed: int = 0,
               calibration: Mapping[str, pd.DataFrame | str | Path] | None = None) -> str:
    """Accuracy overall and by question type / LoCoMo category, with CIs; LoCoMo token F1 beside it; the
    judge's false-accept rate beside the accuracy it qualifies; with and without gold-label errata.

    ``qa`` maps (dataset, adapter) -> the stage's qa.parquet (frame or path); ``calibration`` maps dataset ->
    the qa_calibration stage's probe table.
    """
    if not qa:
        return ""
    frames = {key: read_table(v) for key, v in qa.items()}
    calib = {d: read_table(v) for d, v in (calibration or {}).items()}
    judge_fa = {d: {r.group: rate_ci(r.false_accept, r.fa_low, r.fa_high, r.false_accepts, r.should_reject)
                    for r in calibration_summary(c).itertuples(index=False)} for d, c in calib.items()}
    out = ["### Answer-mode QA", "",
           "Each question is answered by the model from the adapter's top-K retrieved items and judged against "
           "the gold answer (LongMemEval: the upstream per-type rules, abstention questions correct when the answer "
           "declines; LoCoMo category 5: correct when the answer says the information is not mentioned, as "
           "upstream scores it). Token F1 is LoCoMo's own measure (upstream normalisation and Porter stemming). "
           "95% bootstrap CIs over questions; questions without a verdict are excluded and counted.", ""]
    rows, errata = [], {}
    for (dataset, adapter), df in sorted(frames.items()):
        judged = df.correct.notna().sum()
        rows.append([dataset, adapter, len(df), int(judged), mean_ci(_accuracy_values(df), resamples, seed),
                     mean_ci(df.f1, resamples, seed) if _has_f1(df) else "", int(len(df) - judged),
                     judge_fa.get(dataset, {}).get("all", "")])
        changed = _without_errata(df, resamples, seed)
        if changed:
            errata[(dataset, adapter)] = [dataset, adapter, int(df.erratum.notna().sum()), rows[-1][4], changed[0],
                                          rows[-1][5], changed[1]]
    header = ["dataset", "adapter", "questions", "judged", "accuracy [95% CI]", "token F1 [95% CI]", "no verdict",
              "judge false-accept [95% CI]"]
    if not calib:
        header, rows = header[:-1], [r[:-1] for r in rows]
    out += [table(header, rows, numeric=(2, 3, 6)), ""]
    if errata:
        out += ["Gold-label errata (see the dataset's normalisations: each correction names its public source) change "
                "these figures; both are shown. Withdrawn questions are answered but left out with errata.", "",
                table(["dataset", "adapter", "errata", "accuracy with errata", "accuracy without", "token F1 with",
                       "token F1 without"], list(errata.values()), numeric=(2,)), ""]
    for (dataset, adapter), df in sorted(frames.items()):
        by = "category" if _has_f1(df) else "question type"
        rows = []
        for qtype, part in df.groupby(df.question_type.fillna("(none)"), sort=True):
            label = qtype
            if "category" in part and part.category.notna().any():
                label = f"{int(part.category.dropna().iloc[0])} {qtype}"
            rows.append([label, len(part), mean_ci(_accuracy_values(part), resamples, seed),
                         judge_fa.get(dataset, {}).get(label, "n/a"),
                         mean_ci(part.f1, resamples, seed) if _has_f1(df) else "", int(part.correct.isna().sum())])
        rows.sort(key=lambda r: str(r[0]))
        header = [by, "questions", "accuracy [95% CI]", "judge false-accept [95% CI]", "token F1 [95% CI]",
                  "no verdict"]
        keep = [i for i, h in enumerate(header)
                if not (h.startswith("token F1") and not _has_f1(df)) and not (h.startswith("judge") and not calib)]
        header, rows = [header[i] for i in keep], [[r[i] for i in keep] for r in rows]
        out += [f"**{dataset} · {adapter}** by {by}", "", table(header, rows, numeric=(1, len(header) - 1)), ""]
    out += [part for part in (stability_section(frames), calibration_section(calib), versions_section(frames)) if part]
    return "\n".join(out)


def _metric_means(scores: pd.DataFrame, metric: str, resamples: int, seed: int) -> str:
    part = scores[(scores.metric == metric) & scores.skip.isna()]
    return mean_ci(part.value, resamples, seed)


def judge_section(scores: Mapping[tuple[str, str], tuple[Any, Any]],
                  judgments: Mapping[tuple[str, str], Any] | None = None,
                  metrics: Sequence[str] = JUDGE_METRICS, resamples: int = 10000, seed: int = 0) -> str:
    """Official-label figures beside the extended-pool figures (official ∪ LLM judgments), judged@k before
    (official) and after (extended).

    ``scores`` maps (dataset, adapter) -> (official score rows, extended score rows); ``judgments`` maps
    (dataset, adapter) -> that adapter's judgments.parquet, for the count of graded pairs.
    """
    if not scores:
        return ""
    out = ["### Procedural: official labels vs the LLM-judge extended pool", "",
           "The official labels were pooled from ≤ 40 keyword-matched candidates per query, so unlabelled "
           "trajectories are unjudged. The judge graded the unlabelled trajectories in each adapter's top k on the "
           "benchmark's 0-10 scale; the extended pool adds them (≥ 6 relevant with gain = grade, < 6 judged "
           "non-relevant) without changing any official label. judged@k is the share of the top k that carries a "
           "label: before (official) and after (extended).", ""]
    header = ["adapter", "measure", "official [95% CI]", "extended pool [95% CI]"]
    for dataset in sorted({d for d, _ in scores}):
        rows = []
        for (d, adapter), (official, ext) in sorted(scores.items()):
            if d != dataset:
                continue
            official, ext = read_table(official), read_table(ext)
            for m in metrics:
                rows.append([adapter, m, _metric_means(official, m, resamples, seed),
                             _metric_means(ext, PREFIX + m, resamples, seed)])
        out += [f"**{dataset}**", "", table(header, rows, numeric=()), ""]
    if judgments:
        rows = []
        for (dataset, adapter), j in sorted(judgments.items()):
            j = read_table(j)
            ok = j[j.status == "ok"]
            rows.append([dataset, adapter, len(j), len(ok), int((ok.score >= 6).sum()),
                         f"{ok.score.mean():.2f}" if len(ok) else "n/a", int((j.status != "ok").sum())])
        out += [table(["dataset", "adapter", "unlabelled pairs", "graded", "graded ≥ 6", "mean grade", "not graded"],
                      rows, numeric=(2, 3, 4, 5, 6)), ""]
    return "\n".join(out)


def cost_section(paths: Iterable[Any]) -> str:
    """The cost table of every model stage that ran (cost JSON paths or records)."""
    return "### Model-call costs\n\n" + cost_table(paths)


def model_stages_markdown(qa: Mapping | None = None, judge: Mapping | None = None,
                          judgments: Mapping | None = None, costs: Iterable[Any] | None = None,
                          resamples: int = 10000, seed: int = 0, calibration: Mapping | None = None) -> str:
    """All model-stage sections that have inputs, in report order (QA, judge, costs)."""
    parts = []
    if qa:
        parts.append(qa_section(qa, resamples, seed, calibration))
    if judge:
        parts.append(judge_section(judge, judgments, resamples=resamples, seed=seed))
    if costs is not None:
        parts.append(cost_section(costs))
    return "\n".join(p.rstrip() + "\n" for p in parts if p)
