"""Published figures of protocols membench's built-ins reproduce, shown beside ours in the report.

Only figures read in a primary source are listed, each with where it was read and its exact protocol: the dataset
file, the retrieval unit, the metric and its cut-off k, the built-in that reproduces the published system, and n.
A figure is shown only for a run whose protocol matches: a dataset of its kind whose url/path/files name the file
(a `path:` folder: the files in it), indexed in the figure's unit (`datasets.<name>.units`), ranked at least k
deep, by the built-in with its default parameters (whatever the run is called). What was read, and what stays out:

Procedural Memory Benchmark -- qpiai/Proced_mem_bench README.md at c220f741 ('Baseline Systems'): MAP and P@1 of
the two embedding baselines over its 40 queries. Kept (``state-aware``, ``action-only``).

LongMemEval -- arXiv:2410.10813v2 (ICLR 2025), read in a text extraction of the v2 PDF; its Tables 3 and 4 agree
digit for digit with the images the authors publish on the project site (github xiaowu0162/long-mem-eval at
933767b0, figures/7_key_results.png and 8_query_results.png).
  Kept: Appendix E.2, Table 9, row 'K = V' / 'BM25', columns 'Value = session': Recall@5 0.634, NDCG@5 0.516,
  Recall@10 0.710, NDCG@10 0.540 (``bm25-upstream``, ``session/recall_all@k`` and ``session/ndcg_any@k``).
  The mapping and its inferences are spelled out in ``_LME_PROTOCOL``.
  Left out: the 'Value = round' BM25 row (0.472, 0.352, 0.538, 0.372), because the paper does not say whether a
  round's recall is scored on the evidence turns (upstream ``turn``) or on their sessions (``turn2session``);
  the BM25 rows with key expansion (K = V + summary / fact / keyphrases), because their keys hold text that
  Llama 3.1 8B extracted with the paper's prompts, which membench does not build (``+facts`` uses its own
  extractor); every Contriever and Stella V5 row, and Tables 3 and 4 (Stella), because no built-in uses those
  retrievers. The paper prints no BM25 retrieval figure for LongMemEval_S (its retrieval tables, 3, 4 and 9, are
  on LongMemEval_M), so no LongMemEval_S figure is listed and none is shown for an S run.

LoCoMo -- arXiv:2402.17753, Table 3 (RAG-based gpt-3.5-turbo-16k: answer F1 and recall@k by retrieval unit
Dialog / Observation / Summary and top-k), read as the image the authors put on the project page (github
snap-research/locomo at e76cdff4, static/images/tables.svg, an embedded JPEG). The PDF itself could not be
read here. Left out entirely: its retriever is DRAGON (dragon-plus query/context encoders; snap-research/LoCoMo
at 3eb6f2c5, scripts/evaluate_rag_gpts.sh passes ``--retriever dragon`` to every run), which no built-in
reproduces; the Observation and Summary units are gpt-3.5-turbo generations; and the table prints no number
of questions. (Its Dialog top-10 Multi Hop recall is printed as 247.4, above 100.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from membench.report.headlines import ci_text
from membench.report.markdown import table


@dataclass(frozen=True)
class Published:
    kind: str  # dataset kind the figure is about
    adapter: str  # the built-in that reproduces the published system (a run of it with default parameters)
    metric: str  # the membench metric that reproduces the published measure
    value: float
    decimals: int  # as printed; a figure stands for value +- half a unit of its last decimal
    source: str
    protocol: str
    split: str
    n: int
    k: int  # the cut-off the published measure is taken at: the run must rank at least this deep
    file_name: str  # the dataset file it was measured on: shown only for a dataset whose url/path/files name it
    units: str = "upstream"  # the retrieval unit (`datasets.<name>.units`; upstream = the benchmark's own)
    approx: bool = False  # printed with a leading "~"

    def protocol_line(self) -> str:
        """The figure's protocol in one line, as the report prints it."""
        return (f"`{self.adapter}` (default parameters) on `{self.file_name}`, units {self.units}, {self.metric} "
                f"(k = {self.k}), {self.split}, n = {self.n}")


_PROCEDURAL = ("qpiai/Proced_mem_bench README.md at commit c220f741f7630c1ac00fdb6063fb436a8c2cc2e7, "
               "section 'Baseline Systems' ({system}: 'MAP ~{map}, P@1 ~{p1} (full 40-query evaluation)')")
_RUNNER = ("the benchmark runner's own formulas (membench `upstream/` metrics) over the top 10; published: a "
           "GPT-4 judge grading every retrieved trajectory live; membench: the stored query_bank labels")

_LME_SOURCE = ("Wu et al., LongMemEval, arXiv:2410.10813v2 (ICLR 2025), Appendix E.2, Table 9, row 'K = V' / "
               "'BM25', columns 'Value = session' Metric@5 and Metric@10 (Recall, NDCG)")
_LME_PROTOCOL = (
    "LongMemEval's flat-bm25 as in xiaowu0162/LongMemEval at 9e0b455 (src/retrieval/run_retrieval.py: rank-bm25 "
    "BM25Okapi defaults, text split on ' ', each session keyed by its user turns joined; the paper's Sec. 5.1 also "
    "keeps user turns only), which `bm25-upstream` reproduces; Recall = recall_all and NDCG = ndcg_any, the four "
    "columns src/evaluation/print_retrieval_metrics.py prints; split LongMemEval_M, inferred: Table 9's caption "
    "names none, but its Stella rows for K = V + summary and K = V + keyphrases equal Table 3's, which is on "
    "LongMemEval_M; n = 500 questions less the 30 abstention ones, which the upstream README says retrieval "
    "evaluation always skips (the paper prints no n); the paper ran the 2024 release, before the 2025-09 "
    "cleaning of the histories, so on a `longmemeval_m_cleaned` file part of a gap may come from the data")

PUBLISHED: tuple[Published, ...] = tuple(
    Published("procedural", adapter, metric, value, 2, _PROCEDURAL.format(system=system, map=ap, p1=p1), _RUNNER,
              "all", 40, k, "query_bank.json", approx=True)
    for adapter, system, ap, p1 in (("state-aware", "AgentInstructEmbeddingRetrieval", 0.79, 0.78),
                                    ("action-only", "AgentInstructActionOnlyRetrieval", 0.72, 0.65))
    for metric, value, k in (("upstream/AP", ap, 10), ("upstream/P@1", p1, 1))) + tuple(
    Published("longmemeval", "bm25-upstream", metric, value, 3, _LME_SOURCE, _LME_PROTOCOL, "LongMemEval_M", 470,
              int(metric.rsplit("@", 1)[1]), "longmemeval_m")
    for metric, value in (("session/recall_all@5", 0.634), ("session/ndcg_any@5", 0.516),
                          ("session/recall_all@10", 0.710), ("session/ndcg_any@10", 0.540)))


def source_names(spec: Mapping[str, Any]) -> list[str]:
    """The file names a dataset's config points at (url, files' urls, path, and the files in a `path:` folder):
    what `Published.file_name` matches."""
    places = [spec.get("url"), spec.get("path"), *(f.get("url") for f in spec.get("files") or [])]
    names = [str(p).rstrip("/").rsplit("/", 1)[-1] for p in places if p]
    folder = Path(spec["path"]) if spec.get("path") else None
    return names + (sorted(p.name for p in folder.iterdir() if p.is_file()) if folder and folder.is_dir() else [])


def _applies(figure: Published, kind: str, spec: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    """Whether a run (its metadata as the rank stage records it) on a dataset (its config) has the figure's
    protocol: kind, file, unit, depth, and the built-in with its default parameters."""
    from membench.runs.registry import builtin_class

    depth = meta.get("depth")
    return (figure.kind == kind and any(figure.file_name in name for name in source_names(spec))
            and spec.get("units", "upstream") == figure.units
            and (depth == "full" or (isinstance(depth, int) and depth >= figure.k))
            and meta.get("adapter") == figure.adapter
            and meta.get("config") == dict(getattr(builtin_class(figure.adapter), "defaults", {})))


def _verdict(figure: Published, mean: float, lo: float, hi: float, n: int) -> str:
    if n != figure.n:
        return f"not comparable: {n} questions here, {figure.n} published"
    half = 0.5 * 10 ** -figure.decimals
    if math.isnan(lo) or (figure.value + half >= lo and figure.value - half <= hi):
        return "within our CI"
    return f"**gap outside our CI** ({mean - figure.value:+.3f})"


def published_section(dataset: str, kind: str, summary: pd.DataFrame, spec: Mapping[str, Any],
                      metas: Mapping[str, Mapping[str, Any]]) -> str:
    """Our figure with its CI beside every published figure whose protocol a run of this dataset matches,
    flagging gaps. `spec` is the dataset's config entry, `metas` each run's metadata (runs/<run>.json)."""
    rows = summary[(summary.dataset == dataset) & (summary.split == "all") & (summary.group_by == "all")]
    body, sources = [], []
    for figure in PUBLISHED:
        for run in sorted(r for r, meta in metas.items() if _applies(figure, kind, spec, meta)):
            hit = rows[(rows.adapter == run) & (rows.metric == figure.metric)]
            if hit.empty:
                continue
            r = hit.iloc[0]
            printed = f"{'~' if figure.approx else ''}{figure.value:.{figure.decimals}f}"
            ours = f"{r['mean']:.4f} {ci_text(r.ci_lo, r.ci_hi, r.get('unit', 'question'))} (n={int(r.n)})"
            body.append([run, figure.metric, ours,
                         f"{printed} (n={figure.n})", _verdict(figure, r["mean"], r.ci_lo, r.ci_hi, int(r.n))])
            sources += [s for s in (figure.source, figure.protocol_line(), figure.protocol) if s not in sources]
    if not body:
        return ""
    return "\n".join([f"#### Published figures beside ours — {dataset}", "",
                      table(["run", "metric", "membench [95% CI]", "published", "comparison"], body, numeric=()), "",
                      "Sources and protocol: " + "; ".join(sources) + ".", ""])
