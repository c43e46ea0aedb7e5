"""PNG figures for the report: metric@k curves per adapter, and per-group bars."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from membench.io import atomic_path  # noqa: E402


def save_figure(fig, out: Path) -> None:
    """Write a PNG atomically and close the figure."""
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight")
    plt.close(fig)


def curve_plot(summary: pd.DataFrame, dataset: str, family: str, out: Path, note: str = "") -> None:
    """`family@k` against k for every adapter (split all, CI as a band)."""
    rows = summary[(summary.dataset == dataset) & (summary.split == "all") & (summary.group_by == "all")]
    pattern = re.compile(re.escape(family) + r"@(\d+)$")
    rows = rows.assign(k=rows.metric.map(lambda m: int(x.group(1)) if (x := pattern.match(m)) else None)).dropna(subset=["k"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for adapter, part in rows.sort_values("k").groupby("adapter"):
        ax.plot(part.k, part["mean"], marker="o", label=adapter)
        ax.fill_between(part.k, part.ci_lo, part.ci_hi, alpha=0.15)
    ax.set_xscale("log")
    ax.set_xlabel("k")
    ax.set_ylabel(f"{family}@k")
    ax.set_title(f"{note}{dataset}: {family}@k (95% bootstrap CI)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, out)


def group_plot(summary: pd.DataFrame, dataset: str, metric: str, out: Path, note: str = "") -> None:
    """`metric` per question group (type / category / tier) for every adapter."""
    rows = summary[(summary.dataset == dataset) & (summary.group_by != "all") & (summary.metric == metric)]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if rows.empty:
        ax.text(0.5, 0.5, "no question groups", ha="center")
    else:
        table = rows.pivot_table(index="group", columns="adapter", values="mean")
        table.plot.bar(ax=ax, rot=30)
        ax.set_ylabel(metric)
        ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"{note}{dataset}: {metric} by question group")
    save_figure(fig, out)
