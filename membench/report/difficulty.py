"""Where adapters miss: the breakdown metric by evidence count, evidence age, haystack size and evidence position.

Per question, from the gold tables (never shown to adapters):
- evidence count: distinct evidence items (turns; Procedural: labelled trajectories);
- evidence age: sessions in the haystack after the most recent evidence session (the question comes last);
- haystack size: turns in the question's haystack;
- evidence position: where the first evidence turn sits in the haystack, 0 = first turn, 1 = last.
Procedural has one shared corpus and no time, so only the evidence count applies there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from membench.report.markdown import table

FEATURES = {"evidence_count": "evidence count", "evidence_age": "evidence age (sessions after it)",
            "haystack_size": "haystack size (turns)", "evidence_position": "evidence position (0 = first turn)"}
COLUMNS = ["dataset", "adapter", "metric", "feature", "bin", "bin_order", "mean", "n"]


def question_features(questions: pd.DataFrame, qrels: pd.DataFrame, haystacks: pd.DataFrame,
                      turns: pd.DataFrame) -> pd.DataFrame:
    """One row per question: evidence_count, evidence_age, haystack_size, evidence_position (NaN: not defined)."""
    turn_qrels = qrels[qrels.granularity == "turn"]
    if turn_qrels.empty:  # Procedural: trajectory labels only
        counts = qrels.groupby("question_id").item_id.nunique()
        return pd.DataFrame({"question_id": questions.question_id,
                             "evidence_count": questions.question_id.map(counts).fillna(0).to_numpy(),
                             **{f: np.nan for f in FEATURES if f != "evidence_count"}})
    order = (haystacks.merge(turns[["session_key", "turn_index", "item_id"]], on="session_key")
             .sort_values(["haystack_id", "position", "turn_index"]))
    evidence = turn_qrels.groupby("question_id").item_id.agg(set)
    rows = []
    for haystack_id, hay in order.groupby("haystack_id", sort=False):
        items, positions = hay.item_id.to_numpy(), hay.position.to_numpy()
        last_session = positions.max()
        for qid in questions.question_id[questions.haystack_id == haystack_id]:
            gold = evidence.get(qid, set())
            hits = np.flatnonzero(np.isin(items, list(gold))) if gold else np.array([], dtype=int)
            rows.append({"question_id": qid, "evidence_count": len(gold), "haystack_size": len(items),
                         "evidence_age": float(last_session - positions[hits].max()) if hits.size else np.nan,
                         "evidence_position": hits.min() / max(len(items) - 1, 1) if hits.size else np.nan})
    return pd.DataFrame(rows, columns=["question_id", *FEATURES])


def _bins(feature: str, values: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Bin labels and their order: small evidence counts as 0/1/2/3+, positions by quarter, the rest (and
    Procedural's 8-40 labels) by quartile."""
    if feature == "evidence_count" and values.quantile(0.75) <= 3:
        capped = values.clip(upper=3)
        return capped.map(lambda v: "3+" if v >= 3 else str(int(v))), capped
    if feature == "evidence_position":
        quarter = np.minimum((values * 4).fillna(-1).astype(int), 3)
        labels = {0: "0–.25", 1: ".25–.5", 2: ".5–.75", 3: ".75–1"}
        return quarter.map(labels), quarter.where(quarter >= 0)
    ranks = pd.qcut(values, 4, duplicates="drop")
    # integer features, intervals (left, right]: the first integer in a bin is floor(left) + 1
    labels = ranks.map(lambda iv: f"{int(np.floor(iv.left)) + 1}–{int(np.floor(iv.right))}" if pd.notna(iv) else None)
    return labels.astype(object), ranks.cat.codes.where(ranks.notna()).astype(float)


def difficulty_table(dataset: str, features: pd.DataFrame, scores: Mapping[str, pd.DataFrame],
                     metric: str) -> pd.DataFrame:
    """Mean `metric` per adapter and bin of every feature (questions where the feature is defined)."""
    rows = []
    for feature in FEATURES:
        values = features.set_index("question_id")[feature]
        if values.notna().sum() == 0:
            continue
        labels, order = _bins(feature, values)
        for adapter, s in scores.items():
            part = s[(s.metric == metric) & s.skip.isna()].set_index("question_id").value
            frame = pd.DataFrame({"value": part, "bin": labels.reindex(part.index),
                                  "order": order.reindex(part.index)}).dropna(subset=["bin", "value"])
            for (label, rank), g in frame.groupby(["bin", "order"], sort=True):
                rows.append({"dataset": dataset, "adapter": adapter, "metric": metric, "feature": feature,
                             "bin": label, "bin_order": float(rank), "mean": float(g.value.mean()), "n": len(g)})
    return pd.DataFrame(rows, columns=COLUMNS)


def difficulty_markdown(frame: pd.DataFrame) -> str:
    """One table per feature: bins as columns (with n), adapters as rows."""
    if frame.empty:
        return ""
    metric = frame.metric.iloc[0]
    out = [f"#### Where adapters miss — `{metric}` by question difficulty (split `all`)", "",
           "Means per bin of a gold-side feature (see `membench/report/difficulty.py`); evidence age counts the "
           "sessions after the most recent evidence session; position 0 = the haystack's first turn.", ""]
    for feature, part in frame.groupby("feature", sort=False):
        bins = part.drop_duplicates("bin").sort_values("bin_order")
        ns = part.groupby("bin").n.max()
        body = []
        for adapter, rows in part.groupby("adapter", sort=False):
            means = rows.set_index("bin")["mean"]
            body.append([adapter] + [f"{means[b]:.4f}" if b in means else "—" for b in bins.bin])
        out += [f"**{FEATURES[feature]}**", "",
                table(["adapter"] + [f"{b} (n={int(ns[b])})" for b in bins.bin], body,
                      numeric=tuple(range(1, len(bins) + 1))), ""]
    return "\n".join(out)


def difficulty_plot(frame: pd.DataFrame, dataset: str, out: Path, note: str = "") -> None:
    """One panel per feature: the metric per bin, a line per adapter."""
    from membench.report.plots import plt, save_figure

    features = list(dict.fromkeys(frame.feature)) or ["evidence_count"]
    fig, axes = plt.subplots(1, len(features), figsize=(4.2 * len(features), 3.8), squeeze=False)
    for ax, feature in zip(axes[0], features):
        part = frame[frame.feature == feature].sort_values("bin_order")
        for adapter, rows in part.groupby("adapter", sort=False):
            ax.plot(rows.bin, rows["mean"], marker="o", label=adapter)
        ax.set_xlabel(FEATURES.get(feature, feature))
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel(frame.metric.iloc[0] if not frame.empty else "")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"{note}{dataset}: where adapters miss")
    save_figure(fig, out)
