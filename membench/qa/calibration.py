"""How far to trust the verdict judge: false-accept and false-reject rates on probes of known correctness.

``false_accept`` = share of the probes that should be rejected (another question's gold, a near miss, a
made-up answer) that the judge accepted; ``false_reject`` = share of the probes that should be accepted (gold,
paraphrase) that it rejected. Both come with a 95% Wilson score interval (a proportion over probes; exact at 0
and 1, where a bootstrap interval collapses). Groups are the question type (LongMemEval) or the category
(LoCoMo), plus ``all``.
"""

from __future__ import annotations

import math

import pandas as pd

from membench.datasets.tables import group_label
from membench.qa.probes import PROBE_KINDS

__all__ = ["wilson", "calibration_summary", "FALSE_ACCEPT_WARNING", "CALIBRATION_COLUMNS", "group_label"]

FALSE_ACCEPT_WARNING = 0.10
CALIBRATION_COLUMNS = {"question_id": "string", "question_type": "string", "category": "Int64", "probe": "string",
                       "answer": "string", "should_accept": "bool", "accepted": "boolean", "judged_by": "string",
                       "rubric": "string", "status": "string", "error": "string", "model": "string"}


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float, float]:
    """(k/n, low, high): the Wilson score interval of a proportion; NaNs when n is 0."""
    if n == 0:
        return math.nan, math.nan, math.nan
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def calibration_summary(probes: pd.DataFrame) -> pd.DataFrame:
    """One row per group (and ``all``): probes per kind, judged, false accepts/rejects with rates and CIs."""
    judged = probes[probes.accepted.notna()].copy()
    groups = [("all", probes, judged)]
    labels = probes.apply(lambda r: group_label(r) or "(none)", axis=1) if len(probes) else pd.Series([], dtype=str)
    judged_labels = labels[judged.index] if len(judged) else labels
    for label in sorted(set(labels)):
        groups.append((label, probes[labels == label], judged[judged_labels == label]))
    rows = []
    for label, part, done in groups:
        row = {"group": label, "questions": part.question_id.nunique()}
        row.update({kind: int((part.probe == kind).sum()) for kind in PROBE_KINDS})
        row["not_judged"] = int(len(part) - len(done))
        bad = done[~done.should_accept]
        good = done[done.should_accept]
        fa_k, fr_k = int(bad.accepted.astype(bool).sum()), int((~good.accepted.astype(bool)).sum())
        row.update(false_accepts=fa_k, should_reject=len(bad), false_rejects=fr_k, should_accept=len(good))
        row["false_accept"], row["fa_low"], row["fa_high"] = wilson(fa_k, len(bad))
        row["false_reject"], row["fr_low"], row["fr_high"] = wilson(fr_k, len(good))
        rows.append(row)
    return pd.DataFrame(rows)
