"""Report sections that say how far the QA verdicts can be trusted: the judge's calibration on probes, the
stability of re-asked verdicts, the effect of gold-label errata, and the rubric/prompt versions used."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from membench.qa.calibration import FALSE_ACCEPT_WARNING, calibration_summary
from membench.qa.probes import PROBE_KINDS
from membench.report.markdown import table

__all__ = ["calibration_section", "stability_section", "versions_section", "rate_ci", "sample_accuracies"]


def rate_ci(rate: float, low: float, high: float, k: int, n: int) -> str:
    if n == 0 or pd.isna(rate):
        return "n/a"
    return f"{rate:.3f} [{low:.3f}, {high:.3f}] ({k}/{n})"


def calibration_section(calibration: Mapping[str, pd.DataFrame]) -> str:
    """Per dataset: probes of each kind per group and the judge's false-accept / false-reject rates."""
    if not calibration:
        return ""
    out = ["#### Judge calibration", "",
           "Before its verdicts are trusted, the QA judge (same model, prompt and rubrics) graded answers of known "
           "correctness built from the gold data without a model: the gold answer and a paraphrase of it (should be "
           "accepted), another question's gold from the same conversation, a near miss (shifted date or count) and, "
           "for abstention/adversarial questions, a confident made-up answer (should be rejected). False-accept = "
           "accepted wrong probes / wrong probes; false-reject = rejected right probes / right probes; 95% Wilson "
           "intervals, (count/probes). LoCoMo category 5 is decided by upstream's phrase rule, so its row measures "
           "that rule.", ""]
    header = ["group", "questions", *PROBE_KINDS, "false-accept [95% CI]", "false-reject [95% CI]", "not judged"]
    for dataset, probes in sorted(calibration.items()):
        summary = calibration_summary(probes)
        rows = [[r.group, r.questions, *[getattr(r, k) for k in PROBE_KINDS],
                 rate_ci(r.false_accept, r.fa_low, r.fa_high, r.false_accepts, r.should_reject),
                 rate_ci(r.false_reject, r.fr_low, r.fr_high, r.false_rejects, r.should_accept), r.not_judged]
                for r in summary.itertuples(index=False)]
        out += [f"**{dataset}**", "", table(header, rows, numeric=tuple(range(1, 2 + len(PROBE_KINDS))) + (9,)), ""]
        loud = summary[summary.false_accept > FALSE_ACCEPT_WARNING]
        for r in loud.itertuples(index=False):
            out.append(f"> **Warning:** on {dataset} / {r.group} the judge accepted {r.false_accepts} of "
                       f"{r.should_reject} wrong answers (false-accept {r.false_accept:.1%} > "
                       f"{FALSE_ACCEPT_WARNING:.0%}): QA accuracy there overstates what was answered correctly.")
        if len(loud):
            out.append("")
    return "\n".join(out)


def sample_accuracies(df: pd.DataFrame) -> tuple[list[float], float, int]:
    """(accuracy of each verdict sample, share of questions whose samples disagree, questions with >= 2 samples)."""
    marks = [str(v) for v in df.verdicts.dropna()] if "verdicts" in df else []
    if not marks or max(len(m) for m in marks) < 2:
        return [], float("nan"), 0
    width = max(len(m) for m in marks)
    per_sample = []
    for s in range(width):
        got = [m[s] for m in marks if len(m) > s and m[s] != "-"]
        per_sample.append(sum(c == "1" for c in got) / len(got) if got else float("nan"))
    multi = [set(c for c in m if c != "-") for m in marks if sum(c != "-" for c in m) >= 2]
    flips = sum(len(s) > 1 for s in multi)
    return per_sample, (flips / len(multi) if multi else float("nan")), len(multi)


def stability_section(frames: Mapping[tuple[str, str], pd.DataFrame]) -> str:
    """Mean accuracy over re-asked verdict samples, its spread, and the share of questions whose verdict flips."""
    rows = []
    for (dataset, adapter), df in sorted(frames.items()):
        per_sample, flip, n = sample_accuracies(df)
        if not per_sample:
            continue
        acc = np.asarray(per_sample, dtype=float)
        rows.append([dataset, adapter, len(per_sample), f"{np.nanmean(acc):.4f}",
                     f"{np.nanmin(acc):.4f}–{np.nanmax(acc):.4f}", f"{np.nanstd(acc, ddof=1):.4f}",
                     f"{flip:.3f} ({round(flip * n)}/{n})"])
    if not rows:
        return ""
    return "\n".join(["#### Verdict stability", "",
                      "Each verdict was asked `qa.judge_samples` times (every sample has its own cache key, so a "
                      "rerun pays nothing). Accuracy is computed per sample; the flip share is the share of "
                      "questions whose samples disagree.", "",
                      table(["dataset", "adapter", "samples", "mean accuracy", "min–max", "sd", "flip share"], rows,
                            numeric=(2,)), ""])


def versions_section(frames: Mapping[tuple[str, str], pd.DataFrame]) -> str:
    """Which rubric and prompt versions produced the verdicts (each is also a tag in the call's cache key)."""
    rows = []
    for (dataset, adapter), df in sorted(frames.items()):
        prompts = ", ".join(sorted({p for v in df.get("prompts", pd.Series(dtype=str)).dropna()
                                    for p in str(v).split()}))
        for rubric, n in sorted(df.rubric.dropna().value_counts().items()) if "rubric" in df else []:
            rows.append([dataset, adapter, f"`{rubric}`", int(n), prompts])
    if not rows:
        return ""
    return "\n".join(["#### Rubrics and prompts", "",
                      "LongMemEval abstention questions are judged with the abstention rubric (`unanswerable`); "
                      "LoCoMo category 5 by upstream's rule, without a model. Versions are `name@hash of the text`.",
                      "", table(["dataset", "adapter", "rubric", "questions", "prompts"], rows, numeric=(3,)), ""])
