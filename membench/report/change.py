"""The report's and summary.json's measures of change (BEAM): per system, each measure at k = 10 with its CI, over
the questions of the ability it belongs to (membench.benchmarks.beam.change defines them)."""

from __future__ import annotations

import pandas as pd

from membench.report.headlines import json_cell, with_ci
from membench.report.markdown import table

PREFIX = "change/"
K = 10
# each measure, the ability whose questions it is computed over, and whether more is better
MEASURES = (("fresh", "knowledge_update", True), ("stale", "knowledge_update", False),
            ("both_sides", "contradiction_resolution", True), ("one_side", "contradiction_resolution", False),
            ("both_events", "temporal_reasoning", True), ("event_recall", "event_ordering", True),
            ("all_events", "event_ordering", True), ("order_tau", "event_ordering", True))


def change_rows(summary: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The dataset's change rows: split `all`, every question (each measure exists only for its ability's)."""
    rows = summary[(summary.dataset == dataset) & (summary.split == "all") & (summary.group_by == "all")]
    return rows[rows.metric.str.startswith(PREFIX)]


def change_section(dataset: str, summary: pd.DataFrame, adapters: list[str]) -> str:
    """Markdown: one row per system, one column per measure at k = 10; empty where the dataset has none."""
    rows = change_rows(summary, dataset)
    if rows.empty:
        return ""
    present = [(name, ability, up) for name, ability, up in MEASURES if f"{PREFIX}{name}@{K}" in set(rows.metric)]
    cells = []
    for adapter in adapters:
        row = [adapter]
        for name, _, _ in present:
            hit = rows[(rows.adapter == adapter) & (rows.metric == f"{PREFIX}{name}@{K}")]
            row.append(with_ci(hit["mean"].iloc[0], hit.ci_lo.iloc[0], hit.ci_hi.iloc[0], hit.unit.iloc[0])
                       if not hit.empty else "—")
        cells.append(row)
    n = {name: int(rows[rows.metric == f"{PREFIX}{name}@{K}"].n.max()) for name, _, _ in present}
    header = ["adapter"] + [f"{name}@{K} {'↑' if up else '↓'} ({ability}, n={n[name]})" for name, ability, up in present]
    return "\n".join([
        f"#### Measures of change — {dataset} (split `all`, k = {K})", "",
        "Did the system find what changed? fresh: the update in the top k and above the original; stale: the "
        "original in the top k and the update not (the outdated answer); both_sides / one_side: both statements of "
        "a contradiction, or only one (the conflict hidden); both_events: both events of a temporal question; "
        "event_recall, all_events, order_tau: an ordering's events found, all of them, and Kendall's tau-b of their "
        "conversation order against the gold order. ↑ more is better, ↓ less. Each is computed over its ability's "
        "questions whose gold names two distinct sides (the data section counts the others).", "",
        table(header, cells, numeric=tuple(range(1, len(header)))), ""])


def change_json(summary: pd.DataFrame, dataset: str) -> dict | None:
    """summary.json's `change`: system -> measure@k -> {mean, ci_lo, ci_hi, n} (split all), every k; None without."""
    rows = change_rows(summary, dataset)
    if rows.empty:
        return None
    out: dict = {}
    for r in rows.itertuples():
        out.setdefault(r.adapter, {})[r.metric[len(PREFIX):]] = json_cell(r)
    return out

