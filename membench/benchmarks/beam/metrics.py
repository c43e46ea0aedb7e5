"""BEAM's retrieval measures. Upstream scores answers only (an LLM judge over rubrics, `src/evaluation/`), so these are
membench's, on BEAM's own gold ids, in trec_eval's conventions (`membench.metrics.trec`): at message (`turn`) and
batch (`session`) level, for k in `KS`,

- ``recall@k``: the share of the question's gold messages (batches) in the top k (trec_eval's R@k);
- ``recall_all@k``: 1 when every one of them is;
- ``ndcg@k``: binary-gain nDCG@k over the full gold set (trec_eval's nDCG@k).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from membench.metrics import trec

KS: tuple[int, ...] = (1, 5, 10, 25, 50)


def question_rows(granularity: str, ranked: list[str], gold: Mapping[str, float],
                  ks: Sequence[int] = KS) -> dict[str, float]:
    """`<granularity>/recall@k`, `recall_all@k` and `ndcg@k` of one question (NaN without gold)."""
    m = trec.measures(ranked, dict(gold), ks)
    out: dict[str, float] = {}
    for k in ks:
        recall = m[f"R@{k}"]
        out[f"{granularity}/recall@{k}"] = recall
        out[f"{granularity}/recall_all@{k}"] = recall if recall != recall else float(recall == 1.0)
        out[f"{granularity}/ndcg@{k}"] = m[f"nDCG@{k}"]
    return out
