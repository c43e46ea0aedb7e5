"""A memory run scored without its attributed hits: what it would score had results naming no turn been dropped,
as they were before attribution (`membench.memory.attribution`), so the report can show both."""

from __future__ import annotations

import pandas as pd

UNATTRIBUTED = "unattributed:"  # prefix of the metrics of a run scored without its attributed hits


def without_attributed(ranking: pd.DataFrame) -> pd.DataFrame:
    """The run as it would be had results without refs been dropped: attributed items removed, the rest ranked
    again in order (a memory run flags them in its `attributed` column, `membench.memory.run`)."""
    kept = ranking[~ranking.attributed.fillna(False).astype(bool)].sort_values(["question_id", "granularity", "rank"])
    kept = kept.drop(columns="attributed")
    return kept.assign(rank=kept.groupby(["question_id", "granularity"]).cumcount().astype("int64") + 1)
