"""The efficiency chart: accuracy against search latency and against the tokens of the top 10, Pareto front marked."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

from membench.report.plots import plt, save_figure

PANELS = (("latency", "search latency p50 (ms, log scale)", lambda r: (r["latency_ms"] or {}).get("p50")),
          ("tokens", "tokens of the top 10 results (cl100k_base, log scale)",
           lambda r: (r["tokens@k"]["10"] or {}).get("mean")))


def efficiency_plot(record: Mapping[str, Any], out: Path, note: str = "") -> None:
    """Two panels; each run a point with its accuracy CI, the Pareto front joined by a line and named in bold."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, (front_name, label, cost_of) in zip(axes, PANELS):
        points = {run: (cost_of(r), r["accuracy"]) for run, r in record["runs"].items()
                  if r["accuracy"] and cost_of(r)}
        if not points:
            ax.text(0.5, 0.5, "no figures", ha="center")
            continue
        for run, (cost, acc) in points.items():
            on_front = run in record["pareto"][front_name]
            spread = None if acc["ci_lo"] is None else [[acc["mean"] - acc["ci_lo"]], [acc["ci_hi"] - acc["mean"]]]
            ax.errorbar(cost, acc["mean"], yerr=spread,
                        fmt="D" if on_front else "o", color="black" if on_front else "grey", capsize=3)
            ax.annotate(run, (cost, acc["mean"]), textcoords="offset points", xytext=(5, 4), fontsize=8,
                        fontweight="bold" if on_front else "normal")
        front = sorted((points[r][0], points[r][1]["mean"]) for r in record["pareto"][front_name] if r in points)
        if len(front) > 1:
            ax.plot(*zip(*front), color="black", linewidth=1, linestyle="--", label="Pareto front")
            ax.legend(fontsize=8)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(label)
        ax.set_ylabel(f"{record['accuracy_metric']} (95% CI)")
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"{note}{record['dataset']}: accuracy against cost (◆ on the Pareto front)")
    save_figure(fig, out)
