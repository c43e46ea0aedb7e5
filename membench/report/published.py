"""Published figures of protocols membench's built-ins reproduce, shown beside ours in the report.

Only figures read in a primary source are listed, each with where it was read. Left out because no primary
source could be read here (papers not reachable, repositories print no figures): LongMemEval's BM25
session/turn retrieval rows (arXiv 2410.10813) and LoCoMo's RAG retrieval table (arXiv 2402.17753).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from membench.report.markdown import table


@dataclass(frozen=True)
class Published:
    kind: str  # dataset kind the figure is about
    adapter: str  # the membench run that reproduces the published system
    metric: str  # the membench metric that reproduces the published measure
    value: float
    decimals: int  # as printed (a "~0.79" is read as 0.79 +- half a unit of its last decimal)
    source: str
    protocol: str
    split: str
    n: int


_PROCEDURAL = ("qpiai/Proced_mem_bench README.md at commit c220f741f7630c1ac00fdb6063fb436a8c2cc2e7, "
               "section 'Baseline Systems' ({system}: 'MAP ~{map}, P@1 ~{p1} (full 40-query evaluation)')")
_RUNNER = ("the benchmark runner's own formulas (membench `upstream/` metrics) over the top 10; published: a "
           "GPT-4 judge grading every retrieved trajectory live; membench: the stored query_bank labels")

PUBLISHED: tuple[Published, ...] = tuple(
    Published("procedural", adapter, metric, value, 2, _PROCEDURAL.format(system=system, map=ap, p1=p1), _RUNNER,
              "all", 40)
    for adapter, system, ap, p1 in (("state-aware", "AgentInstructEmbeddingRetrieval", 0.79, 0.78),
                                    ("action-only", "AgentInstructActionOnlyRetrieval", 0.72, 0.65))
    for metric, value in (("upstream/AP", ap), ("upstream/P@1", p1)))


def _verdict(figure: Published, mean: float, lo: float, hi: float, n: int) -> str:
    if n != figure.n:
        return f"not comparable: {n} questions here, {figure.n} published"
    half = 0.5 * 10 ** -figure.decimals
    if math.isnan(lo) or (figure.value + half >= lo and figure.value - half <= hi):
        return "within our CI"
    return f"**gap outside our CI** ({mean - figure.value:+.3f})"


def published_section(dataset: str, kind: str, summary: pd.DataFrame) -> str:
    """Our figure with its CI beside every published figure for this dataset kind, flagging gaps."""
    rows = summary[(summary.dataset == dataset) & (summary.split == "all") & (summary.group_by == "all")]
    body, sources = [], []
    for figure in (f for f in PUBLISHED if f.kind == kind):
        hit = rows[(rows.adapter == figure.adapter) & (rows.metric == figure.metric)]
        if hit.empty:
            continue
        r = hit.iloc[0]
        body.append([figure.adapter, figure.metric, f"{r['mean']:.4f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}] (n={int(r.n)})",
                     f"~{figure.value:.{figure.decimals}f} (n={figure.n})",
                     _verdict(figure, r["mean"], r.ci_lo, r.ci_hi, int(r.n))])
        sources += [s for s in (figure.source, figure.protocol) if s not in sources]
    if not body:
        return ""
    return "\n".join([f"#### Published figures beside ours — {dataset}", "",
                      table(["run", "metric", "membench [95% CI]", "published", "comparison"], body, numeric=()), "",
                      "Sources and protocol: " + "; ".join(sources) + ".", ""])
